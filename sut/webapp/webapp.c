/*
 * webapp.c: the reference web application (Olio-like social events), one
 * process per tile in the embedded SUT.
 *
 * Threads and connections: libmicrohttpd runs a pool of `threads` worker
 * threads (each with its own epoll set on the shared listening socket); the
 * app owns as many "slots", each one PostgreSQL connection with every
 * statement prepared plus one Redis connection. A request that needs data
 * takes a free slot from a mutex-guarded stack and returns it when its page
 * is rendered; since a worker handles one request at a time, there is always
 * a free slot and no request ever sets up a connection. A slot whose
 * connection broke is reconnected (and re-prepared) by the next request that
 * takes it; until the server answers again, requests get 503.
 *
 * Pages: every page is built with a constant number of queries (no N+1): the
 * home page is one cached Redis GET (on a miss: two queries), TagSearch one
 * query, EventDetail and PersonDetail two each, the forms one each (the
 * pages themselves are in web_pages.c).
 *
 * The home-page cache cannot go stale after AddEvent: AddEvent commits, then
 * INCRs the key "web<N>:home:gen" and deletes "web<N>:home". A request that
 * misses WATCHes the gen key before it reads the database and stores the
 * page in MULTI/EXEC, which Redis refuses when an AddEvent came in between.
 */
#include "sut/webapp/webapp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sut/webapp/web_assets.h"
#include "sut/webapp/web_html.h"
#include "sut/webapp/web_internal.h"

/* The pages are the web workload's ops (tiles/kinds.c), in the same order: the
 * load generator checks each page's tb-page name against the op it asked for. */
_Static_assert(OP_N <= TB_KIND_WEB_N_OPS, "every page is an op of the web kind");
static const char *const field_names[F_N] = {"user", "password", "name",    "email", "title", "description",
                                             "date", "tags",     "address", "city",  "image"};
static const size_t field_caps[F_N] = {256, 256, 256, 256, 512, 8192, 32, 1024, 256, 256, TB_WEBAPP_MAX_IMAGE};

/* ---- errors and small helpers ------------------------------------------- */

/* PQerrorMessage on one line, into "what: why". */
void web_set_pq_err(char *err, const char *what, PGconn *pg) {
    const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
    tb_seterr_line(err, what, msg && *msg ? msg : "unknown libpq error");
}

/* Parses a positive decimal id (1..2^31-1) that is the whole string. */
static long parse_id(const char *s) {
    long v = 0;
    if (!*s || *s == '0') return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        v = v * 10 + (*s - '0');
        if (v > 2147483647L) return 0;
    }
    return v;
}

/* ---- slots: one PostgreSQL and one Redis connection each ----------------- */

typedef struct stmt {
    const char *name;
    const char *sql;
    int nparams;
} stmt;

/* Every query the pages run. Unqualified names resolve in web<N> through
 * the search_path set at connect. */
static const stmt stmts[] = {
    {"home_events",
     "SELECT e.id, e.title, e.event_date, to_char(e.event_time, 'HH24:MI'), e.city, p.id, p.name "
     "FROM events e JOIN persons p ON p.id = e.submitter "
     "WHERE e.event_date >= current_date ORDER BY e.event_date, e.id LIMIT 10",
     0},
    {"home_tags",
     "SELECT t.name, count(*) FROM event_tags et JOIN tags t ON t.id = et.tag_id "
     "GROUP BY t.name ORDER BY count(*) DESC, t.name LIMIT 40",
     0},
    {"login", "SELECT id, name FROM persons WHERE username = $1 AND password = $2 ORDER BY id LIMIT 1", 2},
    {"tag_search",
     "SELECT e.id, e.title, e.event_date, e.city FROM tags t "
     "JOIN event_tags et ON et.tag_id = t.id JOIN events e ON e.id = et.event_id "
     "WHERE t.name = $1 ORDER BY e.event_date, e.id LIMIT 125",
     1},
    {"event",
     "SELECT e.id, e.title, e.description, e.event_date, to_char(e.event_time, 'HH24:MI'), e.address, e.city, "
     "p.id, p.name, (SELECT string_agg(t.name, ' ' ORDER BY t.name) FROM event_tags et "
     "JOIN tags t ON t.id = et.tag_id WHERE et.event_id = e.id) "
     "FROM events e JOIN persons p ON p.id = e.submitter WHERE e.id = $1",
     1},
    /* Attendees (kind 'a') and the newest comments (kind 'c') in one round trip. */
    {"event_people",
     "(SELECT 'a', p.id, p.name, NULL::text, NULL::text FROM attendees a JOIN persons p ON p.id = a.person_id "
     " WHERE a.event_id = $1 ORDER BY p.id LIMIT 50) "
     "UNION ALL "
     "(SELECT 'c', p.id, p.name, c.body, to_char(c.created, 'YYYY-MM-DD HH24:MI') FROM comments c "
     " JOIN persons p ON p.id = c.person_id WHERE c.event_id = $1 ORDER BY c.id DESC LIMIT 20)",
     1},
    {"person", "SELECT id, name, email, city, summary, created, coalesce(length(image), 0) FROM persons WHERE id = $1",
     1},
    /* Events the person submitted ('s') and attends ('a'). */
    {"person_events",
     "(SELECT 's', e.id, e.title, e.event_date FROM events e WHERE e.submitter = $1 "
     " ORDER BY e.event_date DESC, e.id LIMIT 20) "
     "UNION ALL "
     "(SELECT 'a', e.id, e.title, e.event_date FROM attendees a JOIN events e ON e.id = a.event_id "
     " WHERE a.person_id = $1 ORDER BY e.event_date DESC, e.id LIMIT 20)",
     1},
    {"add_person",
     "INSERT INTO persons (username, password, name, email, city, summary, image, image_type) "
     "VALUES ($1, $2, $3, $1, $4, '', $5, $6) RETURNING id",
     6},
    /* The event and its tags in one statement; unknown tag words are ignored. */
    {"add_event",
     "WITH e AS (INSERT INTO events (title, description, event_date, address, city, submitter) "
     "  VALUES ($1, $2, $3::date, $4, $5, $6) RETURNING id), "
     "et AS (INSERT INTO event_tags (event_id, tag_id) "
     "  SELECT e.id, t.id FROM e, tags t WHERE t.name = ANY ($7::text[])) "
     "SELECT id FROM e",
     7},
};
#define N_STMTS (sizeof stmts / sizeof stmts[0])

static int check_loaded(tb_webapp *app, slot *s, char *err);

/* Connects (or reconnects) s->pg: search_path, every statement prepared;
 * with check, first makes sure schema web<N> is loaded. */
static int slot_pg_connect(tb_webapp *app, slot *s, int check, char *err) {
    char sql[96], what[64];
    PGresult *res;
    if (s->pg) PQfinish(s->pg);
    s->pg = PQconnectdb(app->pg_conninfo);
    snprintf(what, sizeof what, "webapp tile %d: PostgreSQL", app->cfg.tile);
    if (PQstatus(s->pg) != CONNECTION_OK) {
        web_set_pq_err(err, what, s->pg);
        return -1;
    }
    snprintf(sql, sizeof sql, "SET search_path = %s", app->schema);
    res = PQexec(s->pg, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        web_set_pq_err(err, what, s->pg);
        PQclear(res);
        return -1;
    }
    PQclear(res);
    if (check && check_loaded(app, s, err) != 0) return -1;
    for (size_t i = 0; i < N_STMTS; i++) {
        res = PQprepare(s->pg, stmts[i].name, stmts[i].sql, stmts[i].nparams, NULL);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            char w2[160];
            snprintf(w2, sizeof w2, "%s: prepare %s", what, stmts[i].name);
            web_set_pq_err(err, w2, s->pg);
            PQclear(res);
            return -1;
        }
        PQclear(res);
    }
    return 0;
}

static int slot_redis_connect(tb_webapp *app, slot *s, char *err) {
    struct timeval tv = {2, 0};
    if (s->rd) redisFree(s->rd);
    s->rd = redisConnectWithTimeout(app->redis_host, app->cfg.redis_port, tv);
    if (!s->rd || s->rd->err) {
        tb_seterr(err, "webapp tile %d: Redis %s:%d: %s", app->cfg.tile, app->redis_host, app->cfg.redis_port,
                  s->rd ? s->rd->errstr : "out of memory");
        return -1;
    }
    redisSetTimeout(s->rd, tv);
    return 0;
}

/* Takes a free slot, reconnecting what broke. NULL when a server does not
 * answer (the slot goes back; the request gets 503). */
static slot *slot_get(tb_webapp *app) {
    char err[TB_ERR_LEN];
    slot *s;
    pthread_mutex_lock(&app->mu);
    while (app->nfree == 0)
        pthread_cond_wait(&app->cv, &app->mu);
    s = &app->slots[app->free_idx[--app->nfree]];
    pthread_mutex_unlock(&app->mu);
    if ((!s->pg || PQstatus(s->pg) != CONNECTION_OK) && slot_pg_connect(app, s, 0, err) != 0) goto fail;
    if ((!s->rd || s->rd->err) && slot_redis_connect(app, s, err) != 0) goto fail;
    return s;
fail:
    tb_log(TB_LOG_WARN, "%s", err);
    pthread_mutex_lock(&app->mu);
    app->free_idx[app->nfree++] = (int)(s - app->slots);
    pthread_cond_signal(&app->cv);
    pthread_mutex_unlock(&app->mu);
    return NULL;
}

static void slot_put(tb_webapp *app, slot *s) {
    pthread_mutex_lock(&app->mu);
    app->free_idx[app->nfree++] = (int)(s - app->slots);
    pthread_cond_signal(&app->cv);
    pthread_mutex_unlock(&app->mu);
}

/* Runs a prepared statement with text parameters (lengths/formats only for
 * binary ones). NULL result = failed (logged); caller PQclears. */
PGresult *web_run(slot *s, const char *name, int n, const char *const *vals, const int *lens, const int *fmts) {
    PGresult *res = PQexecPrepared(s->pg, name, n, vals, lens, fmts, 0);
    ExecStatusType st = PQresultStatus(res);
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) return res;
    {
        char err[TB_ERR_LEN];
        web_set_pq_err(err, name, s->pg);
        tb_log(TB_LOG_WARN, "webapp: %s", err);
    }
    PQclear(res);
    return NULL;
}

/* ---- responses ------------------------------------------------------------ */

static enum MHD_Result send_resp(tb_webapp *app, req *r, struct MHD_Connection *c, unsigned status,
                                 struct MHD_Response *resp) {
    enum MHD_Result rc = MHD_queue_response(c, status, resp);
    if (r && r->counted) {
        if (status < 400)
            atomic_fetch_add(&app->status_2xx, 1);
        else if (status < 500)
            atomic_fetch_add(&app->status_4xx, 1);
        else
            atomic_fetch_add(&app->status_5xx, 1);
    }
    return rc;
}

static enum MHD_Result send_text(tb_webapp *app, req *r, struct MHD_Connection *c, unsigned status, const char *type,
                                 const char *text);

static enum MHD_Result send_page(tb_webapp *app, req *r, struct MHD_Connection *c, page *p) {
    size_t len;
    if (p->html.overflow) {
        tb_log(TB_LOG_WARN, "webapp: a %s page passed %zu bytes; answering 500",
               p->op >= 0 ? tb_kind_web_ops[p->op] : "", TB_WEB_PAGE_MAX);
        tb_buf_free(&p->html);
        return send_text(app, r, c, 500, "text/plain; charset=utf-8", "page too large\n");
    }
    char *body = tb_buf_take(&p->html, &len);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (p->cookie[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, p->cookie);
    if (p->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, p->allow);
    if (p->op >= 0) atomic_fetch_add(&app->op_count[p->op], 1);
    rc = send_resp(app, r, c, p->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_text(tb_webapp *app, req *r, struct MHD_Connection *c, unsigned status, const char *type,
                                 const char *text) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    rc = send_resp(app, r, c, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* ---- service endpoints ------------------------------------------------------ */

/* /healthz: 200 when the database and Redis answer. A connection that a
 * server restart broke only shows it on its first use, so a failed check is
 * retried, up to once per slot plus one: every broken slot is then marked
 * bad and reconnected by slot_get, and a server that is back answers. */
static enum MHD_Result serve_healthz(tb_webapp *app, req *r, struct MHD_Connection *c) {
    int ok = 0;
    for (int attempt = 0; !ok && attempt <= app->nslots; attempt++) {
        slot *s = slot_get(app);
        if (!s) break; /* a server refused a new connection: it is down */
        PGresult *res = PQexec(s->pg, "SELECT 1");
        redisReply *rep = redisCommand(s->rd, "PING");
        ok = PQresultStatus(res) == PGRES_TUPLES_OK && rep && rep->type == REDIS_REPLY_STATUS;
        PQclear(res);
        if (rep) freeReplyObject(rep);
        slot_put(app, s);
    }
    return ok ? send_text(app, r, c, 200, "text/plain; charset=utf-8", "ok\n")
              : send_text(app, r, c, 503, "text/plain; charset=utf-8", "database or redis not answering\n");
}

static enum MHD_Result serve_stats(tb_webapp *app, req *r, struct MHD_Connection *c) {
    json_t *o = json_object(), *ops = json_object();
    char *text;
    enum MHD_Result rc;
    json_object_set_new(o, "requests", json_integer((json_int_t)atomic_load(&app->requests)));
    json_object_set_new(o, "responses_2xx_3xx", json_integer((json_int_t)atomic_load(&app->status_2xx)));
    json_object_set_new(o, "responses_4xx", json_integer((json_int_t)atomic_load(&app->status_4xx)));
    json_object_set_new(o, "responses_5xx", json_integer((json_int_t)atomic_load(&app->status_5xx)));
    for (int i = 0; i < OP_N; i++)
        json_object_set_new(ops, tb_kind_web_ops[i], json_integer((json_int_t)atomic_load(&app->op_count[i])));
    json_object_set_new(o, "pages", ops);
    json_object_set_new(o, "tile", json_integer(app->cfg.tile));
    json_object_set_new(o, "threads", json_integer(app->nslots));
    json_object_set_new(o, "uptime_s", json_real((double)(tb_now_us() - app->started_us) / 1e6));
    text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text) return MHD_NO;
    rc = send_text(app, r, c, 200, "application/json", text);
    free(text);
    return rc;
}

/* ---- request handling -------------------------------------------------------- */

static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
                                size_t size) {
    req *r = cls;
    (void)kind;
    (void)filename;
    (void)transfer_encoding;
    (void)off;
    for (int f = 0; f < F_N; f++) {
        if (strcmp(key, field_names[f]) != 0) continue;
        if (r->field[f].len + size > field_caps[f]) {
            r->too_big = 1;
            return MHD_YES; /* keep parsing (and discarding) so the 413 goes out cleanly */
        }
        if (f == F_IMAGE && content_type && !r->image_type[0])
            snprintf(r->image_type, sizeof r->image_type, "%s", content_type);
        if (size)
            tb_buf_putn(&r->field[f], data, size);
        else if (!r->field[f].ptr)
            tb_buf_put(&r->field[f], "");
        break;
    }
    return MHD_YES;
}

/* Route from path and method; *allow set for a known path with the wrong
 * method (405). */
static int route_of(const char *url, const char *method, long *id, const char **allow) {
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0, post = strcmp(method, "POST") == 0;
    int route = R_NONE, want_post = 0;
    *allow = NULL;
    if (strcmp(url, "/") == 0)
        route = R_HOME;
    else if (strcmp(url, "/login") == 0)
        route = R_LOGIN, want_post = 1;
    else if (strcmp(url, "/tags") == 0)
        route = R_TAGS;
    else if (strcmp(url, "/events") == 0)
        route = R_ADDEVENT, want_post = 1;
    else if (strcmp(url, "/persons") == 0)
        route = R_ADDPERSON, want_post = 1;
    else if (strncmp(url, "/events/", 8) == 0)
        route = (*id = parse_id(url + 8)) > 0 ? R_EVENT : R_NONE;
    else if (strncmp(url, "/persons/", 9) == 0)
        route = (*id = parse_id(url + 9)) > 0 ? R_PERSON : R_NONE;
    else if (strncmp(url, "/static/", 8) == 0)
        route = R_STATIC;
    else if (strcmp(url, "/healthz") == 0)
        route = R_HEALTHZ;
    else if (strcmp(url, "/stats") == 0)
        route = R_STATS;
    if (route == R_NONE) return R_NONE;
    if (want_post ? !post : !get) {
        *allow = want_post ? "POST" : "GET, HEAD";
        return -route;
    }
    return route;
}

static enum MHD_Result serve_static(tb_webapp *app, req *r, struct MHD_Connection *c, const char *url) {
    const tb_web_asset *a = tb_web_asset_find(&app->assets, url);
    page p = {.html = {.max = TB_WEB_PAGE_MAX}};
    if (a) return send_resp(app, r, c, 200, app->asset_resp[a - app->assets.a]);
    web_error_page(&p, 404, "no such file");
    return send_page(app, r, c, &p);
}

/* The page of a data route, rendered with a slot; 503 without one. */
static enum MHD_Result serve_page(tb_webapp *app, req *r, struct MHD_Connection *c) {
    page p = {.html = {.max = TB_WEB_PAGE_MAX}};
    slot *s = slot_get(app);
    if (!s) {
        web_error_page(&p, 503, "the database or the session store does not answer");
        return send_page(app, r, c, &p);
    }
    web_render(app, s, c, r, &p);
    slot_put(app, s);
    return send_page(app, r, c, &p);
}

/*
 * MHD calls this once after the headers, once per piece of body, and once
 * when the request is complete. Responses go out on that last call: one
 * queued earlier makes MHD close the connection (the request was not read to
 * its end), which would cost keep-alive. The one exception is a body whose
 * Content-Length is over the cap: 413 at once, and the connection closes.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    tb_webapp *app = cls;
    req *r = *con_cls;
    page p = {.html = {.max = TB_WEB_PAGE_MAX}};
    const char *allow;
    (void)version;
    if (!r) {
        r = xcalloc(1, sizeof *r);
        for (int f = 0; f < F_N; f++)
            tb_buf_init(&r->field[f], field_caps[f]);
        *con_cls = r;
        r->route = route_of(url, method, &r->id, &allow);
        r->allow = allow;
        if (r->route != R_HEALTHZ && r->route != R_STATS && r->route != -R_HEALTHZ && r->route != -R_STATS) {
            r->counted = 1;
            atomic_fetch_add(&app->requests, 1);
        }
        if (r->route == R_LOGIN || r->route == R_ADDPERSON || r->route == R_ADDEVENT) {
            const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl && strtoull(cl, NULL, 10) > TB_WEBAPP_MAX_BODY) {
                web_error_page(&p, 413, "request body too large");
                return send_page(app, r, c, &p);
            }
            r->pp = MHD_create_post_processor(c, 16 * 1024, on_field, r);
            if (!r->pp) r->bad_body = 1; /* no form content type */
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        r->body_bytes += *upload_data_size;
        if (r->body_bytes > TB_WEBAPP_MAX_BODY) r->too_big = 1;
        if (r->body_bytes > 16ull * TB_WEBAPP_MAX_BODY) return MHD_NO; /* a flood: close */
        if (r->pp && !r->too_big && !r->bad_body && MHD_post_process(r->pp, upload_data, *upload_data_size) != MHD_YES)
            r->bad_body = 1;
        *upload_data_size = 0;
        return MHD_YES;
    }
    /* The whole request is in. */
    if (r->route == R_NONE) {
        web_error_page(&p, 404, "not found");
        return send_page(app, r, c, &p);
    }
    if (r->route < 0) {
        web_error_page(&p, 405, "method not allowed");
        p.allow = r->allow;
        return send_page(app, r, c, &p);
    }
    switch (r->route) {
    case R_STATIC: return serve_static(app, r, c, url);
    case R_HEALTHZ: return serve_healthz(app, r, c);
    case R_STATS: return serve_stats(app, r, c);
    case R_LOGIN:
    case R_ADDPERSON:
    case R_ADDEVENT:
        if (r->pp) {
            if (MHD_destroy_post_processor(r->pp) != MHD_YES && !r->too_big) r->bad_body = 1;
            r->pp = NULL;
        }
        if (r->too_big) {
            web_error_page(&p, 413, "request body or a field too large");
            return send_page(app, r, c, &p);
        }
        if (r->bad_body) {
            web_error_page(&p, 400,
                           "expected a well-formed application/x-www-form-urlencoded or multipart/form-data body");
            return send_page(app, r, c, &p);
        }
        return serve_page(app, r, c);
    default: return serve_page(app, r, c);
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    req *r = *con_cls;
    (void)cls;
    (void)c;
    (void)why;
    if (!r) return;
    if (r->pp) MHD_destroy_post_processor(r->pp);
    for (int f = 0; f < F_N; f++)
        tb_buf_free(&r->field[f]);
    free(r);
    *con_cls = NULL;
}

/* MHD's own messages (malformed requests, resource limits) go to the log. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    char buf[512];
    size_t n;
    (void)cls;
    vsnprintf(buf, sizeof buf, fmt, ap);
    n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    tb_log(TB_LOG_DEBUG, "webapp: libmicrohttpd: %s", buf);
}

/* ---- open / close -------------------------------------------------------------- */

static int listen_socket(const char *host, int port, char *err) {
    struct sockaddr_in sa;
    int one = 1, fd;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        tb_seterr(err, "listen %s:%d: not an IPv4 address", host, port);
        return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tb_seterr(err, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1024) != 0) {
        tb_seterr(err, "listen %s:%d: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int check_loaded(tb_webapp *app, slot *s, char *err) {
    char sql[96];
    PGresult *res;
    int ok;
    snprintf(sql, sizeof sql, "SELECT v FROM %s.tb_meta WHERE k = 'loaded'", app->schema);
    res = PQexec(s->pg, sql);
    ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    PQclear(res);
    if (!ok)
        tb_seterr(err,
                  "webapp tile %d: schema %s is missing or not loaded in this database (the embedded SUT loads it "
                  "in `tilebench sut up`)",
                  app->cfg.tile, app->schema);
    return ok ? 0 : -1;
}

int tb_webapp_open(const tb_webapp_config *cfg, tb_webapp **out, char *err) {
    tb_webapp *app;
    int fd, i;
    *out = NULL;
    if (!cfg || !cfg->host || !cfg->pg_conninfo || !cfg->redis_host || cfg->tile < 1 || cfg->port < 1 ||
        cfg->port > 65535 || cfg->redis_port < 1 || cfg->redis_port > 65535 || cfg->threads < 0 ||
        cfg->threads > TB_WEBAPP_MAX_THREADS) {
        tb_seterr(err, "webapp: bad configuration (tile >= 1, ports 1..65535, threads 0..%d)", TB_WEBAPP_MAX_THREADS);
        return -1;
    }
    app = xcalloc(1, sizeof *app);
    app->cfg = *cfg;
    app->host = xstrdup(cfg->host);
    app->pg_conninfo = xstrdup(cfg->pg_conninfo);
    app->redis_host = xstrdup(cfg->redis_host);
    app->cfg.host = app->host;
    app->cfg.pg_conninfo = app->pg_conninfo;
    app->cfg.redis_host = app->redis_host;
    app->nslots = cfg->threads ? cfg->threads : TB_WEBAPP_DEFAULT_THREADS;
    snprintf(app->schema, sizeof app->schema, "web%d", cfg->tile);
    snprintf(app->k_home, sizeof app->k_home, "web%d:home", cfg->tile);
    snprintf(app->k_gen, sizeof app->k_gen, "web%d:home:gen", cfg->tile);
    snprintf(app->k_sess, sizeof app->k_sess, "web%d:sess:", cfg->tile);
    pthread_mutex_init(&app->mu, NULL);
    pthread_cond_init(&app->cv, NULL);
    app->slots = xcalloc((size_t)app->nslots, sizeof *app->slots);
    app->free_idx = xcalloc((size_t)app->nslots, sizeof *app->free_idx);
    tb_web_assets_init(&app->assets);
    app->asset_resp = xcalloc((size_t)app->assets.n, sizeof *app->asset_resp);
    for (i = 0; i < app->assets.n; i++) {
        tb_web_asset *a = &app->assets.a[i];
        app->asset_resp[i] = MHD_create_response_from_buffer(a->len, a->data, MHD_RESPMEM_PERSISTENT);
        if (!app->asset_resp[i]) {
            tb_seterr(err, "webapp: out of memory");
            goto fail;
        }
        MHD_add_response_header(app->asset_resp[i], MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
        MHD_add_response_header(app->asset_resp[i], MHD_HTTP_HEADER_CACHE_CONTROL, "public, max-age=3600");
    }
    for (i = 0; i < app->nslots; i++) {
        if (slot_pg_connect(app, &app->slots[i], i == 0, err) != 0) goto fail;
        if (slot_redis_connect(app, &app->slots[i], err) != 0) goto fail;
        app->free_idx[app->nfree++] = i;
    }
    fd = listen_socket(cfg->host, cfg->port, err);
    if (fd < 0) goto fail;
    app->started_us = tb_now_us();
    app->d = MHD_start_daemon(
        MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, app,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)app->nslots, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)16384, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, app, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
        app, MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_END);
    if (!app->d) {
        tb_seterr(err, "webapp: libmicrohttpd could not start on %s:%d", cfg->host, cfg->port);
        close(fd);
        goto fail;
    }
    *out = app;
    return 0;
fail:
    tb_webapp_close(app);
    return -1;
}

uint64_t tb_webapp_requests(tb_webapp *app) { return (uint64_t)atomic_load(&app->requests); }

void tb_webapp_close(tb_webapp *app) {
    if (!app) return;
    if (app->d) MHD_stop_daemon(app->d);
    for (int i = 0; i < app->nslots; i++) {
        if (app->slots[i].pg) PQfinish(app->slots[i].pg);
        if (app->slots[i].rd) redisFree(app->slots[i].rd);
    }
    if (app->asset_resp)
        for (int i = 0; i < app->assets.n; i++)
            if (app->asset_resp[i]) MHD_destroy_response(app->asset_resp[i]);
    free(app->asset_resp);
    tb_web_assets_free(&app->assets);
    free(app->slots);
    free(app->free_idx);
    pthread_cond_destroy(&app->cv);
    pthread_mutex_destroy(&app->mu);
    free(app->host);
    free(app->pg_conninfo);
    free(app->redis_host);
    free(app);
}
