/*
 * agent.c: the agent daemon (agent.h). One thread, one broker connection:
 * a loop that blocks at most 200 ms on the agent's command stream, and
 * between reads renews the heartbeat, checks the coordinator's lease,
 * sends live progress and, on the agent's own monotonic clock, each phase's
 * statistics as its end passes. The load generator's worker threads run
 * the users meanwhile.
 *
 * Clock: a level's plan arrives in broker time (Redis TIME, µs). At each
 * level start the agent estimates its offset to the broker NTP-style
 * (broker/broker.h: several probes, the lowest round trip kept) and maps
 * every edge onto its monotonic clock. The offset and its bound go back to
 * the coordinator, which stores them per agent and level.
 *
 * Dead man's switch: while it serves a run, the agent checks every second
 * that the lease key still names its coordinator, and how long the key
 * has left (PTTL): the lease holds until then. Once that moment passes
 * without a renewal seen (the coordinator was killed, the network or the
 * broker is gone) it stops every user and frees the run, so no orphan load
 * keeps hitting the SUT: within TB_AGENT_LEASE_MS of the coordinator's
 * last renewal, plus one read (200 ms).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/stream.h"
#include "agent/wire.h"
#include "loadgen/loadgen.h"

#define READ_BLOCK_MS 200
#define CLOCK_PROBES  8
#define MAX_PENDING   64 /* results kept while the broker is away */

typedef struct pending {
    char type[24];
    json_t *body;
    uint8_t *stats;
    size_t stats_len;
} pending;

typedef struct agent {
    const tb_agent_opts *o;
    tb_broker_uri uri;
    tb_broker *b;
    tb_agent_info info;
    char k_agent[128], k_cmd[128], k_lease[128];
    uint64_t next_beat_us, next_try_us;
    uint64_t last_ms, last_seq; /* the last command entry handled: a replayed one is ignored */
    int beat_failing;           /* the broker refuses the heartbeat (said once) */
    /* the run it serves */
    int claimed;
    char res_key[192];
    uint64_t lease_until_us; /* our monotonic clock: the lease holds until then */
    tb_tiledef *def;
    tb_sut_endpoints ep;
    tb_loadgen *lg;
    /* the level in progress */
    int level_on, seq, next_phase, ramp_sent;
    int last_level_seq; /* of this run: a level plan at or below it is an old one */
    tb_level_plan plan;
    tb_broker_clock clk;
    double cpu0;
    pending q[MAX_PENDING];
    int nq;
} agent;

static void say(agent *a, int level, const char *fmt, ...) TB_PRINTF(3, 4);
static void say(agent *a, int level, const char *fmt, ...) {
    char msg[TB_ERR_LEN + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (a->o->say) a->o->say(a->o->arg, level, msg);
}

/* ---- sending, with a queue while the broker is away ---------------------- */

static void queue_msg(agent *a, const char *type, json_t *body, uint8_t *stats, size_t len) {
    pending *p;
    if (a->nq == MAX_PENDING) {
        say(a, TB_LOG_WARN, "broker away: dropped a '%s' message (queue full)", type);
        json_decref(body);
        free(stats);
        return;
    }
    p = &a->q[a->nq++];
    snprintf(p->type, sizeof p->type, "%s", type);
    p->body = body;
    p->stats = stats;
    p->stats_len = len;
}

/* Sends what is queued, oldest first; stops at the first failure. */
static void flush_queue(agent *a) {
    int i = 0;
    char err[TB_ERR_LEN];
    for (; i < a->nq && a->b && !tb_broker_broken(a->b); i++) {
        pending *p = &a->q[i];
        if (!a->claimed) continue; /* the run is gone: drop it */
        if (tb_stream_send(a->b, a->res_key, p->type, a->info.name, p->body, p->stats, p->stats_len, err) != 0) break;
    }
    for (int k = 0; k < i; k++) {
        json_decref(a->q[k].body);
        free(a->q[k].stats);
    }
    memmove(a->q, a->q + i, (size_t)(a->nq - i) * sizeof a->q[0]);
    a->nq -= i;
}

/* Sends one message to the coordinator (takes body and stats). */
static void reply(agent *a, const char *type, json_t *body, uint8_t *stats, size_t len) {
    queue_msg(a, type, body, stats, len);
    flush_queue(a);
}

static void reply_error(agent *a, int seq, const char *msg) {
    say(a, TB_LOG_ERROR, "%s", msg);
    reply(a, "error", json_pack("{s:i, s:s}", "seq", seq, "error", msg), NULL, 0);
}

/* ---- the run ------------------------------------------------------------- */

static void end_level(agent *a, tb_lg_stats **all) {
    char err[TB_ERR_LEN];
    if (!a->level_on) return;
    if (a->lg->ops->stop_level(a->lg->self, all, err) != 0) say(a, TB_LOG_ERROR, "%s", err);
    a->level_on = 0;
}

static void free_run(agent *a) {
    end_level(a, NULL);
    tb_loadgen_close(a->lg);
    a->lg = NULL;
    tb_tiledef_free(a->def);
    a->def = NULL;
    tb_endpoints_free(&a->ep);
    a->claimed = 0;
    a->last_level_seq = 0;
    a->res_key[0] = a->info.coord[0] = 0;
    snprintf(a->info.state, sizeof a->info.state, "idle");
    for (int i = 0; i < a->nq; i++) {
        json_decref(a->q[i].body);
        free(a->q[i].stats);
    }
    a->nq = 0;
}

/* The ops of every workload, as the coordinator's remote load generator reports them. */
static json_t *ops_json(const tb_loadgen *lg) {
    json_t *ws = json_array();
    for (int w = 0; w < lg->def->n_workloads; w++) {
        json_t *ops = json_array();
        for (int k = 0; k < lg->ops->n_ops(lg->self, w); k++)
            json_array_append_new(ops, json_pack("{s:s, s:b, s:f}", "name", lg->ops->op_name(lg->self, w, k), "metric",
                                                 lg->ops->op_is_metric(lg->self, w, k), "mix",
                                                 lg->ops->mix_target_pct(lg->self, w, k)));
        json_array_append_new(ws, ops);
    }
    return ws;
}

/* "run": the coordinator that holds our lease hands us its tile file and the SUT. */
static void on_run(agent *a, const tb_msg *m) {
    const char *coord = json_string_value(json_object_get(m->body, "coord"));
    const char *res = json_string_value(json_object_get(m->body, "res"));
    const char *text = json_string_value(json_object_get(m->body, "tile_text"));
    const char *tname = json_string_value(json_object_get(m->body, "tile_name"));
    char err[TB_ERR_LEN];
    redisReply *r;
    if (!coord || !res || !text || !tname) return reply_error(a, 0, "run: coord, res, tile_name or tile_text missing");
    r = tb_broker_cmd(a->b, err, "GET %s", a->k_lease);
    if (!r || r->type != REDIS_REPLY_STRING || strcmp(r->str, coord) != 0) {
        if (r) freeReplyObject(r);
        say(a, TB_LOG_WARN, "a run from coordinator %s, which does not hold this agent's lease: ignored", coord);
        return;
    }
    freeReplyObject(r);
    if (a->claimed && strcmp(a->info.coord, coord) == 0) {
        say(a, TB_LOG_WARN, "a second run message from coordinator %s: ignored (its run goes on)", coord);
        return;
    }
    if (a->claimed) free_run(a); /* a new run of the lease holder replaces its old one */
    snprintf(a->res_key, sizeof a->res_key, "%s", res);
    snprintf(a->info.coord, sizeof a->info.coord, "%s", coord);
    snprintf(a->info.state, sizeof a->info.state, "busy");
    a->claimed = 1;
    a->lease_until_us = tb_now_us() + (uint64_t)TB_AGENT_LEASE_MS * 1000; /* it was just taken */
    a->def = tb_tiledef_parse(tname, text, strlen(text), err);
    if (!a->def || tb_wire_endpoints_parse(json_object_get(m->body, "endpoints"), &a->ep, err) != 0 ||
        tb_loadgen_local_open(a->def, &a->ep, a->o->threads, &a->lg, err) != 0) {
        reply_error(a, 0, err);
        free_run(a);
        return;
    }
    say(a, TB_LOG_INFO, "serving a run of coordinator %s (%s)", coord, tname);
    reply(a, "ready",
          json_pack("{s:i, s:o}", "threads", a->lg->ops->threads(a->lg->self), "workloads", ops_json(a->lg)), NULL, 0);
}

static void on_probe(agent *a, const tb_msg *m) {
    char err[TB_ERR_LEN] = "";
    int tiles = (int)json_integer_value(json_object_get(m->body, "tiles"));
    int ok = tiles >= 1 && a->lg->ops->probe(a->lg->self, tiles, err) == 0;
    if (tiles < 1) snprintf(err, sizeof err, "probe: no tiles");
    reply(a, "probed", json_pack("{s:b, s:s}", "ok", ok, "error", ok ? "" : err), NULL, 0);
}

/* The plan in broker time onto our monotonic clock. */
static void local_plan(const agent *a, const tb_wire_plan *wp, tb_level_plan *pl) {
    memset(pl, 0, sizeof *pl);
    pl->tiles = wp->tiles;
    pl->tile_lo = wp->tile_lo;
    pl->tile_hi = wp->tile_hi;
    pl->start_us = tb_broker_to_local(&a->clk, wp->start_b);
    pl->ramp_up_us = wp->ramp_up_us;
    pl->n_phases = wp->n_phases;
    for (int p = 0; p < wp->n_phases; p++) {
        pl->phase_start_us[p] = tb_broker_to_local(&a->clk, wp->phase_start_b[p]);
        pl->phase_end_us[p] = tb_broker_to_local(&a->clk, wp->phase_end_b[p]);
    }
}

static int level_users(const agent *a) {
    int n = 0;
    for (int w = 0; w < a->def->n_workloads; w++)
        n += a->def->workloads[w].users * (a->plan.tile_hi - a->plan.tile_lo + 1);
    return n;
}

static void on_level(agent *a, const tb_msg *m) {
    tb_wire_plan wp;
    char err[TB_ERR_LEN];
    tb_lg_stalls sl;
    if (tb_wire_plan_parse(json_object_get(m->body, "plan"), &wp, err) != 0) return reply_error(a, 0, err);
    if (wp.seq <= a->last_level_seq) {
        say(a, TB_LOG_WARN, "an old level plan (%d, after %d): ignored", wp.seq, a->last_level_seq);
        return;
    }
    a->last_level_seq = wp.seq;
    if (tb_loadgen_fd_check(a->def, wp.tile_hi - wp.tile_lo + 1, err) != 0) return reply_error(a, wp.seq, err);
    end_level(a, NULL);
    if (tb_broker_clock_probe(a->b, CLOCK_PROBES, &a->clk, err) != 0) return reply_error(a, wp.seq, err);
    local_plan(a, &wp, &a->plan);
    if (a->plan.phase_end_us[a->plan.n_phases - 1] <= tb_now_us()) {
        snprintf(err, sizeof err, "the level's plan ends in the past on this agent's clock (an old plan?)");
        return reply_error(a, wp.seq, err);
    }
    if (a->lg->ops->start_level(a->lg->self, &a->plan, err) != 0) return reply_error(a, wp.seq, err);
    a->lg->ops->stalls(a->lg->self, &sl); /* the level's stall record starts now */
    a->level_on = 1;
    a->seq = wp.seq;
    a->next_phase = 0;
    a->ramp_sent = 0;
    a->cpu0 = a->lg->ops->cpu_seconds(a->lg->self);
    say(a, TB_LOG_INFO, "%d tiles: running tiles %d..%d; clock offset to the broker known to +/- %llu us", wp.tiles,
        wp.tile_lo, wp.tile_hi, (unsigned long long)a->clk.bound_us);
    reply(a, "started",
          json_pack("{s:i, s:I, s:I, s:I, s:i}", "seq", wp.seq, "offset_us", (json_int_t)a->clk.offset_us, "bound_us",
                    (json_int_t)a->clk.bound_us, "rtt_us", (json_int_t)a->clk.rtt_us, "users", level_users(a)),
          NULL, 0);
}

/* Sends statistics s (freed) as message type with body (taken). */
static void reply_stats(agent *a, const char *type, json_t *body, tb_lg_stats *s) {
    uint8_t *buf = NULL;
    size_t len = 0;
    if (s && tb_lg_stats_encode(s, &buf, &len) != 0) {
        tb_lg_stats_free(s);
        json_decref(body);
        return reply_error(a, a->seq, "cannot encode the statistics");
    }
    tb_lg_stats_free(s);
    reply(a, type, body, buf, len);
}

static void on_stop(agent *a, const tb_msg *m) {
    tb_lg_stats *all = NULL;
    int seq = (int)json_integer_value(json_object_get(m->body, "seq"));
    if (!a->level_on || seq != a->seq) {
        reply(a, "stopped", json_pack("{s:i, s:b}", "seq", seq, "had_level", 0), NULL, 0);
        return;
    }
    end_level(a, &all);
    reply_stats(a, "stopped", json_pack("{s:i, s:b}", "seq", seq, "had_level", 1), all);
}

/* Moves a tile's kv users to another Redis (an infrastructure migrate op
 * on the coordinator's side), answering with the outcome. */
static void on_kv_switch(agent *a, const tb_msg *m) {
    char err[TB_ERR_LEN] = "";
    json_int_t id = json_integer_value(json_object_get(m->body, "id"));
    int tile = (int)json_integer_value(json_object_get(m->body, "tile"));
    int port = (int)json_integer_value(json_object_get(m->body, "port"));
    const char *host = json_string_value(json_object_get(m->body, "host"));
    int ok = host && tb_loadgen_kv_switch(a->lg, tile, host, port, err) == 0;
    if (!host) snprintf(err, sizeof err, "kv_switch: no host");
    if (ok) say(a, TB_LOG_INFO, "tile %d: kv users switched to %s:%d", tile, host, port);
    reply(a, "kv_switched", json_pack("{s:I, s:b, s:s}", "id", id, "ok", ok, "error", ok ? "" : err), NULL, 0);
}

static void on_release(agent *a) {
    say(a, TB_LOG_INFO, "run of coordinator %s ended", a->info.coord);
    free_run(a); /* no reply: the coordinator's results stream is gone */
}

static void handle(agent *a, const tb_msg *m) {
    if (strcmp(m->type, "run") == 0) return on_run(a, m);
    if (!a->claimed) return; /* not for a run we serve (an old one's leftovers) */
    if (strcmp(m->from, a->info.coord) != 0) return;
    if (strcmp(m->type, "probe") == 0) return on_probe(a, m);
    if (!a->lg) return;
    if (strcmp(m->type, "level") == 0) return on_level(a, m);
    if (strcmp(m->type, "stop") == 0) return on_stop(a, m);
    if (strcmp(m->type, "kv_switch") == 0) return on_kv_switch(a, m);
    if (strcmp(m->type, "release") == 0) return on_release(a);
}

/* ---- the level's clock-driven messages ----------------------------------- */

static json_t *health_json(agent *a, const tb_lg_stalls *sl) {
    uint64_t ops = 0, errs = 0;
    a->lg->ops->live(a->lg->self, &ops, &errs);
    return json_pack("{s:i, s:o, s:f, s:I, s:I}", "seq", a->seq, "stalls", tb_wire_stalls_json(sl), "cpu_s",
                     a->lg->ops->cpu_seconds(a->lg->self) - a->cpu0, "ops", (json_int_t)ops, "errors",
                     (json_int_t)errs);
}

/* Ramp-up's stall record when phase 1 begins; each phase's statistics after its end. */
static void level_due(agent *a) {
    uint64_t now = tb_now_us();
    char err[TB_ERR_LEN];
    if (!a->level_on) return;
    if (!a->ramp_sent && now >= a->plan.phase_start_us[0]) {
        tb_lg_stalls sl;
        a->lg->ops->stalls(a->lg->self, &sl);
        a->ramp_sent = 1;
        reply(a, "rampup", health_json(a, &sl), NULL, 0);
    }
    while (a->next_phase < a->plan.n_phases && now >= a->plan.phase_end_us[a->next_phase] + 50000) {
        tb_lg_stats *st = NULL;
        tb_lg_stalls sl;
        json_t *body;
        int p = a->next_phase++;
        if (a->lg->ops->collect_phase(a->lg->self, p, &st, err) != 0) return reply_error(a, a->seq, err);
        a->lg->ops->stalls(a->lg->self, &sl);
        body = health_json(a, &sl);
        json_object_set_new(body, "phase", json_integer(p));
        reply_stats(a, "phase", body, st);
    }
}

/* ---- heartbeat, lease, broker ---------------------------------------------- */

static void heartbeat(agent *a) {
    json_t *j = tb_wire_info_json(&a->info);
    char *text = json_dumps(j, JSON_COMPACT), err[TB_ERR_LEN];
    redisReply *r = tb_broker_cmd(a->b, err, "SET %s %s PX %d", a->k_agent, text, TB_AGENT_ALIVE_MS);
    if (r) freeReplyObject(r);
    r = r ? tb_broker_cmd(a->b, err, "SADD tb:agents %s", a->info.name) : NULL;
    if (r) freeReplyObject(r);
    if (!r && !tb_broker_broken(a->b) && !a->beat_failing)
        say(a, TB_LOG_WARN, "the broker refuses this agent's heartbeat (%s): coordinators will count it lost", err);
    else if (r && a->beat_failing)
        say(a, TB_LOG_INFO, "the broker takes this agent's heartbeat again");
    a->beat_failing = !r && !tb_broker_broken(a->b);
    free(text);
    json_decref(j);
}

/* The lease's time left (PTTL, ms) when it names coordinator ARGV[1], else -3. */
static const char lease_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pttl', KEYS[1]) end return -3";

/* The dead man's switch: 1 when the run was dropped. A lease key gone for
 * a moment (the broker restarted; its coordinator sets it again within a
 * second) does not shorten the time the last renewal gave. */
static int check_lease(agent *a, uint64_t now) {
    char err[TB_ERR_LEN];
    redisReply *r;
    if (!a->claimed) return 0;
    r = a->b && !tb_broker_broken(a->b)
            ? tb_broker_cmd(a->b, err, "EVAL %s 1 %s %s", lease_lua, a->k_lease, a->info.coord)
            : NULL;
    if (r && r->type == REDIS_REPLY_INTEGER && r->integer > 0 && now + (uint64_t)r->integer * 1000 > a->lease_until_us)
        a->lease_until_us = now + (uint64_t)r->integer * 1000;
    if (r) freeReplyObject(r);
    if (now < a->lease_until_us) return 0;
    say(a, TB_LOG_WARN,
        "coordinator %s stopped renewing its lease (it lapsed %d s after its last renewal): every user stopped, the "
        "run "
        "is dropped",
        a->info.coord, TB_AGENT_LEASE_MS / 1000);
    free_run(a);
    return 1;
}

static int reconnect(agent *a, uint64_t now) {
    char err[TB_ERR_LEN];
    if (now < a->next_try_us) return -1;
    a->next_try_us = now + 1000000;
    if (tb_broker_reconnect(a->b, err) != 0) {
        say(a, TB_LOG_WARN, "%s", err);
        return -1;
    }
    /* from "0": a broker that restarted lost the group, and what the
     * coordinator sent since (its stream is new) is for us */
    if (tb_stream_group(a->b, a->k_cmd, "agent", "0", err) != 0) {
        say(a, TB_LOG_WARN, "%s", err);
        return -1;
    }
    say(a, TB_LOG_INFO, "broker %s: connected again", tb_broker_shown(a->b));
    heartbeat(a);
    flush_queue(a);
    return 0;
}

/* What is due every second. */
static void every_second(agent *a, uint64_t now) {
    if (a->claimed && now >= a->lease_until_us && check_lease(a, now)) return; /* at once, not up to 1 s late */
    if (now < a->next_beat_us) return;
    a->next_beat_us = now + (uint64_t)TB_AGENT_HEARTBEAT_MS * 1000;
    if (check_lease(a, now)) return;
    if (tb_broker_broken(a->b)) return;
    heartbeat(a);
    flush_queue(a);
    if (a->level_on) {
        uint64_t ops = 0, errs = 0;
        a->lg->ops->live(a->lg->self, &ops, &errs);
        reply(a, "live",
              json_pack("{s:i, s:I, s:I}", "seq", a->seq, "ops", (json_int_t)ops, "errors", (json_int_t)errs), NULL, 0);
    }
}

/* How long the next read may block: until the next clock-driven message at most. */
static int block_ms(const agent *a, uint64_t now) {
    uint64_t due = now + READ_BLOCK_MS * 1000;
    if (a->level_on && !a->ramp_sent && a->plan.phase_start_us[0] < due) due = a->plan.phase_start_us[0];
    if (a->level_on && a->next_phase < a->plan.n_phases && a->plan.phase_end_us[a->next_phase] + 50000 < due)
        due = a->plan.phase_end_us[a->next_phase] + 50000;
    if (due <= now + 1000) return 1;
    return (int)((due - now) / 1000);
}

static void serve_once(agent *a) {
    tb_msg m[16];
    int n = 0, bad = 0;
    char err[TB_ERR_LEN];
    uint64_t now = tb_now_us();
    if (tb_broker_broken(a->b) && reconnect(a, now) != 0) {
        check_lease(a, now);
        level_due(a);
        tb_nap_us(100000);
        return;
    }
    every_second(a, now);
    level_due(a);
    if (tb_stream_read(a->b, a->k_cmd, "agent", a->info.name, block_ms(a, tb_now_us()), m, 16, &n, &bad, err) != 0) {
        if (!tb_broker_broken(a->b)) say(a, TB_LOG_WARN, "%s", err);
        return;
    }
    for (int i = 0; i < n; i++) {
        /* a command group made again from "0" (the broker lost it) hands back what was handled */
        if (tb_msg_after(&m[i], a->last_ms, a->last_seq)) {
            a->last_ms = m[i].id_ms;
            a->last_seq = m[i].id_seq;
            handle(a, &m[i]);
        }
        tb_msg_free(&m[i]);
    }
}

static int setup(agent *a, const tb_agent_opts *o, char *err) {
    char host[128] = "";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    a->o = o;
    gethostname(host, sizeof host - 1);
    snprintf(a->info.name, sizeof a->info.name, "%s", o->name ? o->name : host);
    if ((o->name && strlen(o->name) >= sizeof a->info.name) || !tb_wire_name_ok(a->info.name)) {
        tb_seterr(err, "agent name '%.64s': use 1..63 letters, digits, '.', '_' or '-' (--name)", a->info.name);
        return TB_EXIT_USAGE;
    }
    snprintf(a->info.host, sizeof a->info.host, "%s", host);
    a->info.cores = cores > 0 ? (int)cores : 1;
    a->info.threads = tb_loadgen_local_threads(o->threads);
    snprintf(a->info.version, sizeof a->info.version, "%s", TB_VERSION);
    a->info.protocol = TB_AGENT_PROTOCOL;
    snprintf(a->info.state, sizeof a->info.state, "idle");
    tb_wire_key(a->k_agent, sizeof a->k_agent, "agent", a->info.name);
    tb_wire_key(a->k_cmd, sizeof a->k_cmd, "cmd", a->info.name);
    tb_wire_key(a->k_lease, sizeof a->k_lease, "lease", a->info.name);
    if (tb_broker_uri_parse(o->broker_uri, &a->uri, err) != 0) return TB_EXIT_USAGE;
    if (tb_broker_connect(&a->uri, 2000, &a->b, err) != 0) return TB_EXIT_USAGE;
    tb_broker_set_timeout(a->b, READ_BLOCK_MS + 2000);
    if (tb_stream_group(a->b, a->k_cmd, "agent", "$", err) != 0) return TB_EXIT_USAGE;
    {
        /* a second agent of the same name would steal the first one's commands */
        redisReply *r = tb_broker_cmd(a->b, err, "EXISTS %s", a->k_agent);
        int taken = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        if (r) freeReplyObject(r);
        if (taken) {
            tb_seterr(err, "an agent named '%s' is already registered at broker %s (--name)", a->info.name,
                      tb_broker_shown(a->b));
            return TB_EXIT_USAGE;
        }
    }
    heartbeat(a);
    say(a, TB_LOG_INFO, "%s registered at broker %s: %d cores, %d load generator thread%s", a->info.name,
        tb_broker_shown(a->b), a->info.cores, a->info.threads, a->info.threads == 1 ? "" : "s");
    return 0;
}

/* Unregisters: its registration, its name, its command stream. */
static void leave(agent *a) {
    char e[TB_ERR_LEN];
    redisReply *r;
    if (tb_broker_broken(a->b)) return;
    r = tb_broker_cmd(a->b, e, "DEL %s %s", a->k_agent, a->k_cmd);
    if (r) freeReplyObject(r);
    r = tb_broker_broken(a->b) ? NULL : tb_broker_cmd(a->b, e, "SREM tb:agents %s", a->info.name);
    if (r) freeReplyObject(r);
}

int tb_agent_serve(const tb_agent_opts *o, char *err) {
    agent a;
    int rc;
    memset(&a, 0, sizeof a);
    rc = setup(&a, o, err);
    while (rc == 0 && !(o->stop && *o->stop))
        serve_once(&a);
    if (rc == 0) {
        if (a.claimed) {
            say(&a, TB_LOG_INFO, "stopping: every user stopped, the run of %s is dropped", a.info.coord);
            end_level(&a, NULL);
            /* its coordinator counts it lost now, not after 3 s of silence */
            reply(&a, "leaving", json_pack("{s:s}", "reason", "stopped on its host"), NULL, 0);
        } else {
            say(&a, TB_LOG_INFO, "stopped");
        }
        free_run(&a);
        leave(&a);
    }
    tb_broker_close(a.b);
    tb_broker_uri_free(&a.uri);
    return rc;
}
