/*
 * kv.c: the kv workload, SET/GET of small values on Redis through hiredis's
 * asynchronous API and its libevent adapter: one connection per user (as
 * redis-benchmark's clients), each attached to its worker's event base. This
 * is the seed study's Redis test (redis-benchmark -t set -d 1).
 *
 * Keys are "t<tile>:k<n>", so tiles never share keys; n follows key_pattern:
 * uniform, zipf (skewed, theta zipf_theta) or sequential (each user walks the
 * key space from its own offset). With pipeline = P, one op sends P commands
 * of the same kind at once and each reply is recorded as one op, timed from
 * the batch's intended start (redis-benchmark -P).
 *
 * A tile's users can be moved to another Redis while they run (kv_redirect,
 * for an infrastructure `migrate` op): the configuration keeps a target per
 * moved tile under a mutex and a generation that every redirect bumps; a
 * user reads the generation (one relaxed atomic load) before each op and,
 * when it changed, looks its tile's target up under the mutex and, when
 * that is not the server it is connected to, drops its connection and
 * connects to the new one. An op in flight finishes where it began; a
 * failure to reach the new server is an ordinary op error (connect, I/O).
 */
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numfmt.h"
#include "loadgen/workload.h"

enum { OP_SET = 0, OP_GET, N_OPS };
/* The op names are the tile model's (tiles/kinds.h: tb_kind_kv_ops), in OP_ order. */
_Static_assert(N_OPS == TB_KIND_KV_N_OPS, "the kv ops must be the catalog's");

enum { KEYS_UNIFORM = 0, KEYS_ZIPF, KEYS_SEQUENTIAL };

typedef struct kv_cfg {
    char *host; /* heap */
    int port;
    int set_pct;
    uint64_t keyspace;
    size_t value_size;
    char *value;
    int pattern;
    int pipeline;
    /* Zipf constants (Gray et al., "Quickly Generating Billion-Record
     * Synthetic Databases", SIGMOD 1994), computed once per configuration */
    double theta, zeta_n, alpha, eta;
    /* Tiles moved to another server (kv_redirect): under mu; gen is bumped
     * (inside mu) by each redirect, so users notice with one relaxed load. */
    pthread_mutex_t mu;
    atomic_uint gen;
    int n_moved;
    struct kv_target *moved;
} kv_cfg;

typedef struct kv_target {
    int tile;
    char host[TB_SUT_MAX_HOST];
    int port;
} kv_target;

typedef struct kv_user {
    const kv_cfg *cfg;
    tb_user_ctx *u;
    redisAsyncContext *ac;
    int connected;
    int dropping;        /* we are freeing ac: its callbacks must not report */
    int writing;         /* inside our own redisAsyncHandleWrite (send_batch) */
    int write_lost;      /* ... and hiredis dropped the connection there */
    int inflight;        /* replies still due for the batch in flight */
    int op;              /* kind of the batch in flight */
    uint64_t seq;        /* next key for the sequential pattern */
    uint64_t backoff_us; /* reconnect back-off after a lost or refused connection */
    unsigned gen;        /* the configuration's gen when host/port were looked up */
    char host[TB_SUT_MAX_HOST];
    int port; /* the server this user connects to (its tile's target) */
} kv_user;

static const char *const known_keys[] = {"set_pct",    "keyspace", "value_size", "key_pattern",
                                         "zipf_theta", "pipeline", NULL};

static double zeta(uint64_t n, double theta) {
    double z = 0;
    for (uint64_t i = 1; i <= n; i++)
        z += 1.0 / pow((double)i, theta);
    return z;
}

/* Zipf rank in [1, n] from a uniform u in [0,1) (Gray et al. 1994). */
static uint64_t zipf_rank(const kv_cfg *c, double u) {
    double uz = u * c->zeta_n;
    uint64_t r;
    if (uz < 1.0) return 1;
    if (uz < 1.0 + pow(0.5, c->theta)) return 2;
    r = 1 + (uint64_t)((double)c->keyspace * pow(c->eta * u - c->eta + 1.0, c->alpha));
    return r > c->keyspace ? c->keyspace : r;
}

/* Scatters ranks over the key space so hot keys are not neighbours
 * (splitmix64 finalizer; the hottest key is still one fixed key). */
static uint64_t scatter(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void kv_cfg_free(void *cfg) {
    kv_cfg *c = cfg;
    free(c->host);
    free(c->value);
    free(c->moved);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int kv_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    kv_cfg *c;
    uint64_t pct, vs;
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    if (!tb_ep_has(ep->redis_host) || ep->redis_port <= 0) {
        tb_seterr(err, "workload %s: the SUT has no Redis endpoint ([sut] redis = HOST:PORT)", w->name);
        return -1;
    }
    if (strlen(ep->redis_host) >= TB_SUT_MAX_HOST) {
        tb_seterr(err, "workload %s: the SUT's Redis host is longer than %d bytes", w->name, TB_SUT_MAX_HOST - 1);
        return -1;
    }
    c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    atomic_init(&c->gen, 0);
    c->host = xstrdup(ep->redis_host);
    c->port = ep->redis_port;
    if (tb_wl_param_u64(w, "set_pct", 50, &pct, err) || tb_wl_param_u64(w, "keyspace", 10000, &c->keyspace, err) ||
        tb_wl_param_u64(w, "value_size", 32, &vs, err)) {
        kv_cfg_free(c);
        return -1;
    }
    if ((pct > 100 && tb_wl_param_bad(w, "set_pct", "expected 0..100 (percent of ops that are SETs)", err)) ||
        (c->keyspace < 1 && tb_wl_param_bad(w, "keyspace", "expected at least 1 key", err)) ||
        (vs > 1048576 && tb_wl_param_bad(w, "value_size", "expected at most 1048576 bytes (1 MiB)", err))) {
        kv_cfg_free(c);
        return -1;
    }
    {
        const tb_param *p = tb_tiledef_param(w, "key_pattern");
        uint64_t pipe;
        const char *pat = p ? p->value : "uniform";
        if (strcmp(pat, "uniform") == 0)
            c->pattern = KEYS_UNIFORM;
        else if (strcmp(pat, "zipf") == 0)
            c->pattern = KEYS_ZIPF;
        else if (strcmp(pat, "sequential") == 0)
            c->pattern = KEYS_SEQUENTIAL;
        else {
            tb_seterr(err, "%s:%d: [workload.%s] key_pattern: '%s': use uniform, zipf or sequential", w->file, p->line,
                      w->name, pat);
            kv_cfg_free(c);
            return -1;
        }
        /* YCSB's default Zipf constant is 0.99 */
        if (tb_wl_param_double(w, "zipf_theta", 0.99, &c->theta, err) != 0 ||
            tb_wl_param_u64(w, "pipeline", 1, &pipe, err) != 0) {
            kv_cfg_free(c);
            return -1;
        }
        if (((c->theta <= 0 || c->theta >= 1) &&
             tb_wl_param_bad(w, "zipf_theta", "expected a number between 0 and 1, both excluded (YCSB uses 0.99)",
                             err)) ||
            ((pipe < 1 || pipe > 1000) && tb_wl_param_bad(w, "pipeline", "expected 1..1000 commands per batch", err))) {
            kv_cfg_free(c);
            return -1;
        }
        if (c->pattern == KEYS_ZIPF && c->keyspace > 100000000) {
            tb_seterr(err, "%s:%d: [workload.%s] keyspace: at most 100000000 keys with key_pattern = zipf", w->file,
                      w->line, w->name);
            kv_cfg_free(c);
            return -1;
        }
        c->pipeline = (int)pipe;
        if (c->pattern == KEYS_ZIPF) {
            double zeta2 = zeta(2, c->theta);
            c->zeta_n = zeta(c->keyspace, c->theta);
            c->alpha = 1.0 / (1.0 - c->theta);
            c->eta = (1.0 - pow(2.0 / (double)c->keyspace, 1.0 - c->theta)) / (1.0 - zeta2 / c->zeta_n);
        }
    }
    c->set_pct = (int)pct;
    c->value_size = (size_t)vs;
    c->value = xmalloc(c->value_size + 1);
    memset(c->value, 'x', c->value_size);
    c->value[c->value_size] = '\0';
    *out = c;
    return 0;
}

/* Looks the user's tile's server up (under the configuration's mutex; the
 * configuration is the workload's own, const to users only by the
 * interface) into s->host/port and s->gen. 1 when it changed. */
static int look_up_target(kv_user *s) {
    kv_cfg *c = (kv_cfg *)s->cfg;
    const char *host = c->host;
    int port = c->port, tile = tb_user_tile(s->u), changed;
    pthread_mutex_lock(&c->mu);
    s->gen = atomic_load_explicit(&c->gen, memory_order_relaxed);
    for (int i = 0; i < c->n_moved; i++)
        if (c->moved[i].tile == tile) {
            host = c->moved[i].host;
            port = c->moved[i].port;
        }
    changed = port != s->port || strcmp(host, s->host) != 0;
    if (changed) {
        snprintf(s->host, sizeof s->host, "%s", host);
        s->port = port;
    }
    pthread_mutex_unlock(&c->mu);
    return changed;
}

static void *kv_user_new(const void *cfg, tb_user_ctx *u) {
    kv_user *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->u = u;
    s->seq = scatter((uint64_t)tb_user_index(u) + 1) % s->cfg->keyspace; /* users start apart */
    (void)look_up_target(s);
    return s;
}

static uint64_t next_key(kv_user *s) {
    const kv_cfg *c = s->cfg;
    switch (c->pattern) {
    case KEYS_ZIPF: return scatter(zipf_rank(c, tb_user_rand01(s->u))) % c->keyspace;
    case KEYS_SEQUENTIAL: return s->seq++ % c->keyspace;
    default: return tb_user_rand(s->u) % c->keyspace;
    }
}

/* Appends "$<len>\r\n<bytes>\r\n" (a RESP bulk string) at p; returns the end. */
static char *put_bulk(char *p, const char *b, size_t n) {
    *p++ = '$';
    p += tb_fmt_uint64(n, p);
    *p++ = '\r';
    *p++ = '\n';
    memcpy(p, b, n);
    p += n;
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

static void on_reply(redisAsyncContext *ac, void *r, void *priv);

/*
 * Builds one SET or GET in Redis's wire format (RESP) on the stack (on the
 * heap for large values), so the hot path neither parses a format string
 * nor allocates as redisAsyncCommand would; hiredis copies the bytes into its
 * output buffer.
 */
static int send_cmd(kv_user *s, int op, uint64_t key_n) {
    char stack[2048], key[2 * TB_NUMFMT_LEN + 4], *buf, *p;
    size_t klen = 1; /* "t<tile>:k<key_n>", without printf */
    key[0] = 't';
    klen += tb_fmt_int64(tb_user_tile(s->u), key + klen);
    key[klen++] = ':';
    key[klen++] = 'k';
    klen += tb_fmt_uint64(key_n, key + klen);
    size_t need = 64 + klen + s->cfg->value_size;
    int rc;
    buf = need <= sizeof stack ? stack : xmalloc(need);
    p = buf;
    if (op == OP_SET) {
        memcpy(p, "*3\r\n$3\r\nSET\r\n", 13);
        p = put_bulk(p + 13, key, klen);
        p = put_bulk(p, s->cfg->value, s->cfg->value_size);
    } else {
        memcpy(p, "*2\r\n$3\r\nGET\r\n", 13);
        p = put_bulk(p + 13, key, klen);
    }
    rc = redisAsyncFormattedCommand(s->ac, on_reply, s, buf, (size_t)(p - buf));
    if (buf != stack) free(buf);
    return rc;
}

static int kv_next_op(void *st) {
    kv_user *s = st;
    return tb_user_rand_range(s->u, 1, 100) <= s->cfg->set_pct ? OP_SET : OP_GET;
}

static void on_connect(const redisAsyncContext *ac, int status) {
    kv_user *s = ac->data;
    if (status == REDIS_OK) {
        s->connected = 1;
    } else {
        /* hiredis frees a context whose connect failed without calling the
         * disconnect callback (it was never connected): forget it here, or
         * the next op would use freed memory (found by test_kv's restart) */
        s->ac = NULL;
        s->connected = 0;
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
    kv_user *s = ac->data;
    (void)status;
    s->ac = NULL; /* hiredis frees the context after this callback */
    s->connected = 0;
}

/* Delays the user's next op before it reconnects: 100 ms doubling to 5 s
 * (tilebench choice), reset by the next reply. */
static void back_off(kv_user *s) {
    s->backoff_us = s->backoff_us ? (s->backoff_us * 2 > 5000000 ? 5000000 : s->backoff_us * 2) : 100000;
    tb_user_delay_next(s->u, s->backoff_us);
}

static void on_reply(redisAsyncContext *ac, void *r, void *priv) {
    kv_user *s = priv;
    redisReply *reply = r;
    tb_op_status st = TB_OP_OK;
    (void)ac;
    if (s->dropping || s->inflight <= 0) return;
    if (s->writing) { /* a failed write inside send_batch: it reports the op */
        s->write_lost = 1;
        return;
    }
    if (!reply) {
        st = s->connected ? TB_OP_ERR_IO : TB_OP_ERR_CONNECT;
        back_off(s);
    } else {
        s->backoff_us = 0;
        if (reply->type == REDIS_REPLY_ERROR)
            st = TB_OP_ERR_SERVER;
        else if (reply->type != REDIS_REPLY_STATUS && reply->type != REDIS_REPLY_STRING &&
                 reply->type != REDIS_REPLY_NIL)
            st = TB_OP_ERR_CONTENT;
    }
    if (--s->inflight > 0) /* an earlier reply of a pipelined batch */
        tb_user_record_step(s->u, s->op, tb_user_intended_us(s->u), tb_user_sent_us(s->u), tb_now_us(), st);
    else
        tb_user_op_done(s->u, st);
}

/*
 * hiredis 0.14's libevent adapter makes its read event one-shot and re-adds
 * it after every read: with libevent's epoll backend that is two epoll_ctl
 * calls per reply. A persistent read event (the adapter's own event and
 * callback, re-assigned with EV_PERSIST before it is first added) stays in
 * the epoll set: hiredis's later addRead calls find it pending and cost
 * nothing, and the adapter's delRead and cleanup still remove it. The write
 * event is left as hiredis arms it (added per command, deleted once the
 * output buffer is flushed). Seen with strace -c on bench/kv: 4 epoll_ctl per
 * op before, 2 after.
 */
static void read_persist(redisAsyncContext *ac, struct event_base *base) {
    redisLibeventEvents *e = ac->ev.data;
    event_del(e->rev);
    event_assign(e->rev, base, ac->c.fd, EV_READ | EV_PERSIST, redisLibeventReadEvent, e);
    event_add(e->rev, NULL);
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

/*
 * Queues the batch's commands and, on a connected context, writes them at
 * once instead of waiting a loop turn for the write event. hiredis asks its
 * adapter for the write event on every command (an epoll_ctl to add it, and
 * another to delete it once flushed); with addWrite unset while the commands
 * are queued and redisAsyncHandleWrite called right after, a batch that fits
 * the socket buffer costs no epoll_ctl at all, and one that does not is left
 * to the write event as before (hiredis adds it when its buffer is not
 * empty). Together with read_persist: 0 epoll_ctl per op instead of 4 in
 * steady state (strace -c, bench/kv). A write error makes hiredis drop the
 * context inside; the op then ends with TB_OP_ERR_IO on the next loop turn.
 * REDIS_OK, or REDIS_ERR when a command could not be queued.
 */
static int send_batch(kv_user *s, int op) {
    int rc = REDIS_OK, direct = s->connected;
    void (*add_write)(void *) = s->ac->ev.addWrite;
    if (direct) s->ac->ev.addWrite = NULL;
    for (int i = 0; i < s->cfg->pipeline && rc == REDIS_OK; i++) {
        rc = send_cmd(s, op, next_key(s));
        if (rc == REDIS_OK) s->inflight++;
    }
    if (!direct) return rc;
    s->ac->ev.addWrite = add_write;
    if (rc != REDIS_OK) return rc;
    s->writing = 1;
    s->write_lost = 0;
    redisAsyncHandleWrite(s->ac); /* may free the context: on_disconnect clears s->ac */
    s->writing = 0;
    if (s->write_lost) {
        s->inflight = 0;
        s->ac = NULL;
        s->connected = 0;
        back_off(s);
        tb_user_op_done_soon(s->u, TB_OP_ERR_IO);
    }
    return REDIS_OK;
}

static void kv_op_start(void *st, int op) {
    kv_user *s = st;
    int rc;
    /* a redirect since the last look: the tile may be served elsewhere now
     * (no op is in flight here, so dropping the connection loses nothing) */
    if (atomic_load_explicit(&((kv_cfg *)s->cfg)->gen, memory_order_relaxed) != s->gen && look_up_target(s)) {
        drop(s);
        s->backoff_us = 0;
    }
    if (!s->ac) {
        s->ac = redisAsyncConnect(s->host, s->port);
        if (!s->ac || s->ac->err) {
            tb_log(TB_LOG_DEBUG, "kv connect %s:%d: %s", s->host, s->port, s->ac ? s->ac->errstr : "out of memory");
            if (s->ac) redisAsyncFree(s->ac);
            s->ac = NULL;
            tb_user_op_done_soon(s->u, TB_OP_ERR_CONNECT);
            return;
        }
        s->ac->data = s;
        redisLibeventAttach(s->ac, tb_user_base(s->u));
        read_persist(s->ac, tb_user_base(s->u));
        redisAsyncSetConnectCallback(s->ac, on_connect);
        redisAsyncSetDisconnectCallback(s->ac, on_disconnect);
    }
    s->op = op;
    rc = send_batch(s, op);
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

/* SUT-ready check: Redis answers PING within 5 s. */
static int kv_probe(const void *cfg, int tiles, char *err) {
    const kv_cfg *c = cfg;
    struct timeval tv = {5, 0};
    redisContext *rc = redisConnectWithTimeout(c->host, c->port, tv);
    redisReply *r;
    (void)tiles;
    if (!rc || rc->err) {
        tb_seterr(err, "kv: connect %s:%d: %s", c->host, c->port, rc ? rc->errstr : "out of memory");
        if (rc) redisFree(rc);
        return -1;
    }
    r = redisCommand(rc, "PING");
    if (!r || r->type == REDIS_REPLY_ERROR) {
        tb_seterr(err, "kv: %s:%d: PING: %s", c->host, c->port, r ? r->str : rc->errstr);
        if (r) freeReplyObject(r);
        redisFree(rc);
        return -1;
    }
    freeReplyObject(r);
    redisFree(rc);
    return 0;
}

/* Moves tile's users to host:port (the SUT's own Redis again forgets the
 * tile's target). */
static int kv_redirect(void *cfg, int tile, const char *host, int port, char *err) {
    kv_cfg *c = cfg;
    int i;
    if (tile < 1 || !host || !*host || strlen(host) >= TB_SUT_MAX_HOST || port < 1 || port > 65535) {
        tb_seterr(err, "kv: cannot move tile %d to %s:%d (want a tile from 1, a host and a port 1..65535)", tile,
                  host ? host : "(none)", port);
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    for (i = 0; i < c->n_moved && c->moved[i].tile != tile; i++)
        ;
    if (port == c->port && strcmp(host, c->host) == 0) { /* back home */
        if (i < c->n_moved) c->moved[i] = c->moved[--c->n_moved];
    } else {
        if (i == c->n_moved) {
            c->moved = xrealloc(c->moved, (size_t)(c->n_moved + 1) * sizeof *c->moved);
            c->n_moved++;
        }
        c->moved[i].tile = tile;
        snprintf(c->moved[i].host, sizeof c->moved[i].host, "%s", host);
        c->moved[i].port = port;
    }
    atomic_fetch_add_explicit(&c->gen, 1, memory_order_relaxed); /* inside mu: a user that sees it then locks mu */
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* SET is set_pct% of the ops, GET the rest. */
static double kv_mix_target_pct(const void *cfg, int op) {
    const kv_cfg *c = cfg;
    return op == OP_SET ? c->set_pct : 100.0 - c->set_pct;
}

const tb_workload_vt tb_kv_workload = {
    .kind = "kv",
    .n_ops = N_OPS,
    .op_names = tb_kind_kv_ops,
    .metric_mask = (1u << OP_SET) | (1u << OP_GET),
    .sockets_per_user = 1,
    .configure = kv_configure,
    .cfg_free = kv_cfg_free,
    .user_new = kv_user_new,
    .next_op = kv_next_op,
    .op_start = kv_op_start,
    .op_cancel = kv_op_cancel,
    .user_free = kv_user_free,
    .mix_target_pct = kv_mix_target_pct,
    .probe = kv_probe,
    .redirect = kv_redirect,
};
