/*
 * http.c: the generic http workload: GET requests to a weighted list of
 * absolute http:// URLs (for example static files on nginx), so that any
 * existing web server can be part of a tile. One keep-alive connection per
 * user and origin (loadgen/http_client.h); each op is one GET of a URL drawn
 * by weight.
 *
 * Pacing is the driver's: think_time = 0 is a closed loop at the maximum
 * rate (as wrk with one connection per user); think_time = T waits T after
 * each response; cycle_time = C makes each user's requests due every C on a
 * fixed grid whatever the responses take (open loop, wrk2's rule: latency
 * counts from the due time, so a slow server shows as latency, not as fewer
 * requests); think_dist = negexp makes the grid a Poisson process. The
 * offered rate is users / C per tile.
 *
 * Errors: a status >= 400 is TB_OP_ERR_SERVER; a body without the `expect`
 * text (searched in the first 1 MiB) or bytes that are not HTTP are
 * TB_OP_ERR_CONTENT; refused connects TB_OP_ERR_CONNECT (with a back-off of
 * 100 ms doubling to 5 s, as kv); a connection lost mid-response
 * TB_OP_ERR_IO.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/http_client.h"
#include "loadgen/workload.h"

enum { OP_GET = 0, N_OPS };
/* The op names are the tile model's (tiles/kinds.h: tb_kind_http_ops), in OP_ order. */
_Static_assert(N_OPS == TB_KIND_HTTP_N_OPS, "the http ops must be the catalog's");

#define HTTP_MAX_URLS    64
#define HTTP_EXPECT_SCAN (1024u * 1024u) /* body bytes searched for `expect` */

typedef struct http_url {
    int origin;   /* index into cfg->origins */
    uint64_t cum; /* cumulative weight up to and including this URL */
    char *head;   /* prebuilt "GET path HTTP/1.1\r\nHost: ...\r\n" */
    size_t head_len;
} http_url;

typedef struct http_cfg {
    int n_urls, n_origins;
    http_url urls[HTTP_MAX_URLS];
    tb_http_target origins[HTTP_MAX_URLS];
    uint64_t total_weight;
    char expect[256];
} http_cfg;

typedef struct http_user {
    const http_cfg *cfg;
    tb_user_ctx *u;
    tb_http_conn **conns; /* per origin, created on first use */
    uint64_t backoff_us;
} http_user;

static const char *const known_keys[] = {"urls", "expect", NULL};

static void http_cfg_free(void *cfg) {
    http_cfg *c = cfg;
    if (!c) return;
    for (int i = 0; i < c->n_urls; i++)
        free(c->urls[i].head);
    free(c);
}

/* "URL=WEIGHT URL=WEIGHT ..." (spaces between entries; the weight is after
 * the last '=', so URLs may hold '=' in their query). */
static int parse_urls(const tb_workload_def *w, const tb_param *p, http_cfg *c, char *err) {
    char buf[sizeof p->value], *save = NULL, *tok, e[TB_ERR_LEN];
    snprintf(buf, sizeof buf, "%s", p->value);
    for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strrchr(tok, '='), *end, path[512];
        long wt;
        tb_http_target t;
        http_url *u;
        int o;
        if (!eq || eq == tok) {
            tb_seterr(err, "%s:%d: [workload.%s] urls: '%s': expected URL=WEIGHT", w->file, p->line, w->name, tok);
            return -1;
        }
        *eq = '\0';
        wt = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || *end || wt < 1 || wt > 1000000) {
            tb_seterr(err, "%s:%d: [workload.%s] urls: %s: weight '%s' must be 1..1000000", w->file, p->line, w->name,
                      tok, eq + 1);
            return -1;
        }
        if (c->n_urls == HTTP_MAX_URLS) {
            tb_seterr(err, "%s:%d: [workload.%s] urls: at most %d URLs", w->file, p->line, w->name, HTTP_MAX_URLS);
            return -1;
        }
        if (tb_http_url_parse(tok, &t, path, sizeof path, e) != 0) {
            tb_seterr(err, "%s:%d: [workload.%s] urls: %s", w->file, p->line, w->name, e);
            return -1;
        }
        for (o = 0; o < c->n_origins; o++)
            if (strcmp(c->origins[o].origin, t.origin) == 0) break;
        if (o == c->n_origins) c->origins[c->n_origins++] = t;
        u = &c->urls[c->n_urls++];
        u->origin = o;
        c->total_weight += (uint64_t)wt;
        u->cum = c->total_weight;
        u->head = xmalloc(strlen(path) + strlen(t.host) + 64);
        u->head_len =
            (size_t)sprintf(u->head, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tilebench\r\n", path, t.host);
    }
    if (c->n_urls == 0) {
        tb_seterr(err, "%s:%d: [workload.%s] urls: no URL given", w->file, p->line, w->name);
        return -1;
    }
    return 0;
}

static int http_configure(const tb_workload_def *w, const tb_sut_endpoints *ep, void **out, char *err) {
    http_cfg *c;
    const tb_param *urls = tb_tiledef_param(w, "urls"), *expect = tb_tiledef_param(w, "expect");
    (void)ep; /* absolute URLs: the [sut] section plays no part */
    if (tb_wl_check_keys(w, known_keys, err) != 0) return -1;
    if (!urls) {
        tb_seterr(err, "%s:%d: [workload.%s] urls: missing (urls = http://HOST:PORT/PATH=WEIGHT ...)", w->file, w->line,
                  w->name);
        return -1;
    }
    c = xcalloc(1, sizeof *c);
    if (parse_urls(w, urls, c, err) != 0) {
        http_cfg_free(c);
        return -1;
    }
    if (expect) {
        if (!expect->value[0]) {
            tb_seterr(err, "%s:%d: [workload.%s] expect: empty text", w->file, expect->line, w->name);
            http_cfg_free(c);
            return -1;
        }
        snprintf(c->expect, sizeof c->expect, "%s", expect->value);
    }
    *out = c;
    return 0;
}

static void *http_user_new(const void *cfg, tb_user_ctx *u) {
    http_user *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->u = u;
    s->conns = xcalloc((size_t)s->cfg->n_origins, sizeof *s->conns);
    return s;
}

static int http_next_op(void *st) {
    (void)st;
    return OP_GET;
}

static void on_response(void *arg, tb_http_result r, const tb_http_parser *resp, const char *why) {
    http_user *s = arg;
    tb_op_status st = TB_OP_OK;
    switch (r) {
    case TB_HTTP_OK:
        s->backoff_us = 0;
        if (resp->status >= 400)
            st = TB_OP_ERR_SERVER;
        else if (s->cfg->expect[0] && (!resp->body || !strstr(resp->body, s->cfg->expect)))
            st = TB_OP_ERR_CONTENT;
        break;
    case TB_HTTP_ECONNECT:
        st = TB_OP_ERR_CONNECT;
        /* back off before reconnecting: 100 ms doubling to 5 s (tilebench choice, as kv) */
        s->backoff_us = s->backoff_us ? (s->backoff_us * 2 > 5000000 ? 5000000 : s->backoff_us * 2) : 100000;
        tb_user_delay_next(s->u, s->backoff_us);
        break;
    case TB_HTTP_EPROTO: st = TB_OP_ERR_CONTENT; break;
    default: st = TB_OP_ERR_IO; break;
    }
    if (st != TB_OP_OK) tb_log(TB_LOG_DEBUG, "http: %s", r == TB_HTTP_OK ? "bad status or content" : why);
    tb_user_op_done(s->u, st);
}

static void http_op_start(void *st, int op) {
    http_user *s = st;
    const http_cfg *c = s->cfg;
    const http_url *url = &c->urls[0];
    (void)op;
    if (c->n_urls > 1) {
        uint64_t x = tb_user_rand(s->u) % c->total_weight;
        int i = 0;
        while (c->urls[i].cum <= x)
            i++;
        url = &c->urls[i];
    }
    if (!s->conns[url->origin])
        s->conns[url->origin] =
            tb_http_conn_new(tb_user_base(s->u), &c->origins[url->origin], c->expect[0] ? HTTP_EXPECT_SCAN : 0);
    if (tb_http_conn_send(s->conns[url->origin], url->head, url->head_len, NULL, 0, on_response, s) != 0)
        tb_user_op_done_soon(s->u, TB_OP_ERR_IO); /* cannot happen: one op at a time per user */
}

static void http_op_cancel(void *st) {
    http_user *s = st;
    for (int i = 0; i < s->cfg->n_origins; i++)
        if (s->conns[i]) tb_http_conn_drop(s->conns[i]);
}

static void http_user_free(void *st) {
    http_user *s = st;
    for (int i = 0; i < s->cfg->n_origins; i++)
        tb_http_conn_free(s->conns[i]);
    free(s->conns);
    free(s);
}

/* SUT ready: every origin accepts a TCP connection within 5 s. No request is
 * sent, so server-side request counts hold only the load's requests. */
static int http_probe(const void *cfg, int tiles, char *err) {
    const http_cfg *c = cfg;
    (void)tiles;
    for (int i = 0; i < c->n_origins; i++) {
        int status;
        char e[TB_ERR_LEN];
        if (tb_http_probe(&c->origins[i], NULL, 5000, &status, e) != 0) {
            tb_seterr(err, "http: %s", e);
            return -1;
        }
    }
    return 0;
}

const tb_workload_vt tb_http_workload = {
    .kind = "http",
    .n_ops = N_OPS,
    .op_names = tb_kind_http_ops,
    .metric_mask = 1u << OP_GET,
    .sockets_per_user = 1, /* one per origin: one for a single-server URL list */
    .configure = http_configure,
    .cfg_free = http_cfg_free,
    .user_new = http_user_new,
    .next_op = http_next_op,
    .op_start = http_op_start,
    .op_cancel = http_op_cancel,
    .user_free = http_user_free,
    .probe = http_probe,
    .coarse_at_max_rate = 1, /* its only timers are the client's zero-delay "report next turn" */
};
