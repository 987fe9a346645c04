/*
 * remote_open.c: getting the agents of a run (remote.h): waiting until
 * enough have registered, claiming each with a lease that no other
 * coordinator can take while we renew it, and handing each the tile file
 * and the SUT's endpoints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/remote_int.h"

#define READY_WAIT_US 30000000

typedef struct seen {
    char names[TB_REMOTE_MAX_AGENTS][TB_AGENT_NAME_MAX];
    int n;
    char busy[512], refused[1024];
} seen;

static int wanted(const remote *r, const char *name) {
    if (r->o->n_names == 0) return 1;
    for (int i = 0; i < r->o->n_names; i++)
        if (strcmp(r->o->names[i], name) == 0) return 1;
    return 0;
}

static int have(const remote *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->ag[i].info.name, name) == 0) return 1;
    return 0;
}

/* Adds name to the ", "-separated list unless it is there already (as a whole item). */
static void add_name(char *list, size_t len, const char *name) {
    size_t n = strlen(list), k = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += k)
        if ((p == list || p[-1] == ' ') && (p[k] == ',' || p[k] == 0)) return;
    snprintf(list + n, len - n, "%s%s", n ? ", " : "", name);
}

/* One registered agent: claimed when it fits, else noted in *sn. */
static void consider(remote *r, const tb_agent_info *ai, seen *sn) {
    char key[128], err[TB_ERR_LEN];
    ragent *a;
    if (have(r, ai->name) || !wanted(r, ai->name) || r->n >= r->o->agents) return;
    if (ai->protocol != TB_AGENT_PROTOCOL || strcmp(ai->version, TB_VERSION) != 0) {
        char why[160];
        snprintf(why, sizeof why, "%s (tilebench %s, protocol %d; this coordinator: %s, %d)", ai->name, ai->version,
                 ai->protocol, TB_VERSION, TB_AGENT_PROTOCOL);
        add_name(sn->refused, sizeof sn->refused, why);
        return;
    }
    tb_wire_key(key, sizeof key, "lease", ai->name);
    if (tb_remote_claim(r->cmd, key, r->coord, err) != 0) {
        add_name(sn->busy, sizeof sn->busy, ai->name);
        return;
    }
    a = &r->ag[r->n++];
    memset(a, 0, sizeof *a);
    a->info = *ai;
    snprintf(a->k_lease, sizeof a->k_lease, "%s", key);
    tb_wire_key(a->k_cmd, sizeof a->k_cmd, "cmd", ai->name);
    tb_wire_key(a->k_agent, sizeof a->k_agent, "agent", ai->name);
    a->last_seen_us = tb_now_us();
}

/* Every agent registered now: SMEMBERS tb:agents, then each one's key. */
static int look(remote *r, seen *sn, char *err) {
    redisReply *m = tb_broker_cmd(r->cmd, err, "SMEMBERS tb:agents");
    if (!m) return -1;
    sn->n = 0;
    for (size_t i = 0; i < m->elements && m->type == REDIS_REPLY_ARRAY; i++) {
        char key[128], e[TB_ERR_LEN];
        redisReply *v;
        tb_agent_info ai;
        if (m->element[i]->type != REDIS_REPLY_STRING || !tb_wire_name_ok(m->element[i]->str)) continue;
        tb_wire_key(key, sizeof key, "agent", m->element[i]->str);
        v = tb_broker_cmd(r->cmd, e, "GET %s", key);
        if (v && v->type == REDIS_REPLY_STRING && tb_wire_info_parse(v->str, v->len, &ai, e) == 0) {
            if (sn->n < TB_REMOTE_MAX_AGENTS) snprintf(sn->names[sn->n++], TB_AGENT_NAME_MAX, "%s", ai.name);
            consider(r, &ai, sn);
        }
        if (v) freeReplyObject(v);
    }
    freeReplyObject(m);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const ragent *)a)->info.name, ((const ragent *)b)->info.name);
}

/* The error for agents that did not come in time. */
static void missing(const remote *r, const seen *sn, uint64_t waited_us, char *err) {
    char got[512] = "", absent[512] = "";
    for (int i = 0; i < r->n; i++)
        add_name(got, sizeof got, r->ag[i].info.name);
    for (int i = 0; i < r->o->n_names; i++)
        if (!have(r, r->o->names[i])) add_name(absent, sizeof absent, r->o->names[i]);
    tb_seterr(err, "waited %llu s for %d agents at broker %s: %d ready (%s)%s%s%s%s%s%s",
              (unsigned long long)(waited_us / 1000000), r->o->agents, tb_broker_shown(r->cmd), r->n,
              got[0] ? got : "none", absent[0] ? "; missing: " : "", absent,
              sn->busy[0] ? "; in another coordinator's run: " : "", sn->busy, sn->refused[0] ? "; refused: " : "",
              sn->refused);
}

int tb_remote_gather(remote *r, char *err) {
    uint64_t wait = r->o->wait_us ? r->o->wait_us : TB_REMOTE_WAIT_DEFAULT_US, t0 = tb_now_us();
    seen sn;
    memset(&sn, 0, sizeof sn);
    if (r->o->agents < 1 || r->o->agents > TB_REMOTE_MAX_AGENTS) {
        tb_seterr(err, "--agents %d: expected 1..%d", r->o->agents, TB_REMOTE_MAX_AGENTS);
        return -1;
    }
    r->ag = xcalloc((size_t)r->o->agents, sizeof *r->ag);
    for (;;) {
        sn.busy[0] = sn.refused[0] = 0;
        if (look(r, &sn, err) != 0) return -1;
        if (r->n == r->o->agents) break;
        if (tb_now_us() - t0 >= wait || (r->o->stop && *r->o->stop)) {
            missing(r, &sn, tb_now_us() - t0, err);
            return -2;
        }
        /* our leases must not lapse while we wait for the rest */
        for (int i = 0; i < r->n; i++)
            tb_remote_renew(r->cmd, r->ag[i].k_lease, r->coord, err);
        tb_nap_us(250000);
    }
    qsort(r->ag, (size_t)r->n, sizeof *r->ag, by_name);
    return 0;
}

static int all_ready(remote *r) {
    for (int i = 0; i < r->n; i++)
        if (!r->ag[i].ready && !r->ag[i].error[0]) return 0;
    return 1;
}

int tb_remote_hand_out(remote *r, char *err) {
    const tb_tiledef *def = r->pub.def;
    char *text = tb_wire_tile_text(def->text ? def->text : "");
    json_t *body =
        json_pack("{s:s, s:s, s:s, s:s, s:o}", "coord", r->coord, "res", r->res_key, "tile_name",
                  def->path ? def->path : "tile", "tile_text", text, "endpoints", tb_wire_endpoints_json(r->ep));
    int rc = 0;
    free(text);
    for (int i = 0; i < r->n && rc == 0; i++)
        rc = tb_stream_send(r->cmd, r->ag[i].k_cmd, "run", r->coord, body, NULL, 0, err);
    json_decref(body);
    if (rc != 0) return -1;
    pthread_mutex_lock(&r->mu);
    {
        uint64_t end = tb_now_us() + READY_WAIT_US;
        while (!all_ready(r) && tb_now_us() < end && !(r->o->stop && *r->o->stop)) {
            pthread_mutex_unlock(&r->mu);
            tb_nap_us(50000);
            pthread_mutex_lock(&r->mu);
        }
    }
    for (int i = 0; i < r->n && rc == 0; i++) {
        const ragent *a = &r->ag[i];
        if (a->error[0])
            tb_seterr(err, "agent %s: %s", a->info.name, a->error), rc = -2;
        else if (!a->ready)
            tb_seterr(err, "agent %s did not take the run within %d s", a->info.name, READY_WAIT_US / 1000000), rc = -2;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}
