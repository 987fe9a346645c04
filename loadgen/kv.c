/*
 * kv.c: the kv workload, SET/GET of small values on Redis through hiredis's
 * asynchronous API and its libevent adapter, one connection per user (as
 * redis-benchmark's clients). This is the seed study's Redis test
 * (redis-benchmark -t set -d 1) in closed-loop form; keys are uniform over
 * the tile's key space "t<tile>:k<n>", so tiles never share keys.
 */
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/workload.h"

enum { OP_SET = 0, OP_GET, N_OPS };
static const char *const op_names[N_OPS] = {"SET", "GET"};

typedef struct kv_cfg {
    char host[128];
    int port;
    int set_pct;
    uint64_t keyspace;
    size_t value_size;
    char *value;
} kv_cfg;

typedef struct kv_user {
    const kv_cfg *cfg;
    tb_user_ctx *u;
    redisAsyncContext *ac;
    int connected;
    int dropping;  /* we are freeing ac: its callbacks must not report */
    int inflight;
} kv_user;

static const char *const known_keys[] = {"set_pct", "keyspace", "value_size", NULL};

static int kv_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    kv_cfg *c;
    uint64_t pct, vs;
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    if (!ep->redis_host[0] || ep->redis_port <= 0) {
        tb_seterr(err, "workload %s: the SUT has no Redis endpoint ([sut] redis = HOST:PORT)", w->name);
        return -1;
    }
    c = xcalloc(1, sizeof *c);
    snprintf(c->host, sizeof c->host, "%s", ep->redis_host);
    c->port = ep->redis_port;
    if (tb_wl_param_u64(w, "set_pct", 50, &pct, err) || tb_wl_param_u64(w, "keyspace", 10000, &c->keyspace, err) ||
        tb_wl_param_u64(w, "value_size", 32, &vs, err)) {
        free(c);
        return -1;
    }
    if (pct > 100 || c->keyspace < 1 || vs > 1048576) {
        tb_seterr(err, "%s:%d: [workload.%s]: set_pct must be 0..100, keyspace >= 1, value_size <= 1 MiB", w->file,
                  w->line, w->name);
        free(c);
        return -1;
    }
    c->set_pct = (int)pct;
    c->value_size = (size_t)vs;
    c->value = xmalloc(c->value_size + 1);
    memset(c->value, 'x', c->value_size);
    c->value[c->value_size] = '\0';
    *out = c;
    return 0;
}

static void kv_cfg_free(void *cfg) {
    kv_cfg *c = cfg;
    free(c->value);
    free(c);
}

static void *kv_user_new(const void *cfg, tb_user_ctx *u) {
    kv_user *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->u = u;
    return s;
}

static int kv_next_op(void *st) {
    kv_user *s = st;
    return tb_user_rand_range(s->u, 1, 100) <= s->cfg->set_pct ? OP_SET : OP_GET;
}

static void on_connect(const redisAsyncContext *ac, int status) {
    kv_user *s = ac->data;
    if (status == REDIS_OK) s->connected = 1;
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
    kv_user *s = ac->data;
    (void)status;
    s->ac = NULL; /* hiredis frees the context after this callback */
    s->connected = 0;
}

static void on_reply(redisAsyncContext *ac, void *r, void *priv) {
    kv_user *s = priv;
    redisReply *reply = r;
    tb_op_status st = TB_OP_OK;
    (void)ac;
    if (s->dropping || !s->inflight) return;
    s->inflight = 0;
    if (!reply) st = s->connected ? TB_OP_ERR_IO : TB_OP_ERR_CONNECT;
    else if (reply->type == REDIS_REPLY_ERROR) st = TB_OP_ERR_SERVER;
    else if (reply->type != REDIS_REPLY_STATUS && reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_NIL)
        st = TB_OP_ERR_CONTENT;
    tb_user_op_done(s->u, st);
}

static void drop(kv_user *s) {
    if (s->ac) {
        s->dropping = 1;
        redisAsyncFree(s->ac); /* calls pending callbacks with NULL, then on_disconnect */
        s->dropping = 0;
    }
    s->ac = NULL;
    s->connected = 0;
    s->inflight = 0;
}

static void kv_op_start(void *st, int op) {
    kv_user *s = st;
    char key[64];
    int rc;
    if (!s->ac) {
        s->ac = redisAsyncConnect(s->cfg->host, s->cfg->port);
        if (!s->ac || s->ac->err) {
            tb_log(TB_LOG_DEBUG, "kv connect %s:%d: %s", s->cfg->host, s->cfg->port,
                   s->ac ? s->ac->errstr : "out of memory");
            if (s->ac) redisAsyncFree(s->ac);
            s->ac = NULL;
            tb_user_op_done_soon(s->u, TB_OP_ERR_CONNECT);
            return;
        }
        s->ac->data = s;
        redisLibeventAttach(s->ac, tb_user_base(s->u));
        redisAsyncSetConnectCallback(s->ac, on_connect);
        redisAsyncSetDisconnectCallback(s->ac, on_disconnect);
    }
    snprintf(key, sizeof key, "t%d:k%llu", tb_user_tile(s->u),
             (unsigned long long)(tb_user_rand(s->u) % s->cfg->keyspace));
    s->inflight = 1;
    if (op == OP_SET)
        rc = redisAsyncCommand(s->ac, on_reply, s, "SET %s %b", key, s->cfg->value, s->cfg->value_size);
    else
        rc = redisAsyncCommand(s->ac, on_reply, s, "GET %s", key);
    if (rc != REDIS_OK) {
        s->inflight = 0;
        drop(s);
        tb_user_op_done_soon(s->u, TB_OP_ERR_IO);
    }
}

static void kv_op_cancel(void *st) {
    kv_user *s = st;
    drop(s);
}

static void kv_user_free(void *st) {
    kv_user *s = st;
    drop(s);
    free(s);
}

const tb_workload_vt tb_kv_workload = {
    .kind = "kv",
    .n_ops = N_OPS,
    .op_names = op_names,
    .metric_mask = (1u << OP_SET) | (1u << OP_GET),
    .configure = kv_configure,
    .cfg_free = kv_cfg_free,
    .user_new = kv_user_new,
    .next_op = kv_next_op,
    .op_start = kv_op_start,
    .op_cancel = kv_op_cancel,
    .user_free = kv_user_free,
};
