/*
 * web_internal.h: what the reference web application's two halves share:
 * webapp.c (the HTTP server, the connection slots, routing) and web_pages.c
 * (rendering the pages). Not for callers outside sut/webapp/.
 */
#ifndef TB_SUT_WEB_INTERNAL_H
#define TB_SUT_WEB_INTERNAL_H

#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common/buf.h"
#include "sut/webapp/web_assets.h"
#include "sut/webapp/webapp.h"
#include "tiles/kinds.h"

/* The pages (ops) of docs/webapp.md, as carried by the tb-page marker. */
enum { OP_HOME = 0, OP_LOGIN, OP_TAGSEARCH, OP_EVENT, OP_PERSON, OP_ADDPERSON, OP_ADDEVENT, OP_N };

/* What a request asks for, decided from path and method on its first call. */
enum {
    R_NONE = 0,
    R_STATIC,
    R_HEALTHZ,
    R_STATS,
    R_HOME,
    R_LOGIN,
    R_TAGS,
    R_EVENT,
    R_PERSON,
    R_ADDPERSON,
    R_ADDEVENT,
};

/* Form fields the POST pages read; anything else is ignored. */
enum {
    F_USER = 0,
    F_PASSWORD,
    F_NAME,
    F_EMAIL,
    F_TITLE,
    F_DESCRIPTION,
    F_DATE,
    F_TAGS,
    F_ADDRESS,
    F_CITY,
    F_IMAGE,
    F_N
};

typedef struct slot {
    PGconn *pg;
    redisContext *rd;
} slot;

struct tb_webapp {
    tb_webapp_config cfg;
    char *pg_conninfo, *redis_host, *host;
    char schema[32];
    char k_home[48], k_gen[48], k_sess[48]; /* Redis keys: "web<N>:home", "...:home:gen", "...:sess:" */
    struct MHD_Daemon *d;
    uint64_t started_us;
    atomic_uint_fast64_t requests, status_2xx, status_4xx, status_5xx, op_count[OP_N];

    pthread_mutex_t mu;
    pthread_cond_t cv;
    slot *slots;
    int nslots;
    int *free_idx; /* stack of free slot indexes */
    int nfree;

    tb_web_assets assets;
    struct MHD_Response **asset_resp; /* one shared response per asset, reused by MHD */
};

/* Per-request state (MHD's con_cls). */
typedef struct req {
    int route;
    long id; /* /events/ID, /persons/ID */
    struct MHD_PostProcessor *pp;
    int counted;
    const char *allow; /* 405: the methods the path takes */
    int too_big;       /* body or a field over its cap: 413 */
    int bad_body;      /* post data the processor rejected: 400 */
    uint64_t body_bytes;
    tb_buf field[F_N];
    char image_type[64];
} req;

/* A rendered page to send: status, HTML (malloc'd), optional cookie. */
typedef struct page {
    unsigned status;
    int op; /* -1: not a page op */
    tb_buf html;
    char cookie[96];
    const char *allow; /* 405: the Allow header */
} page;

/* PQerrorMessage on one line, into "what: why". */
void web_set_pq_err(char *err, const char *what, PGconn *pg);
/* Runs a prepared statement with text parameters (lengths/formats only for
 * binary ones). NULL result = failed (logged); caller PQclears. */
PGresult *web_run(slot *s, const char *name, int n, const char *const *vals, const int *lens, const int *fmts);

/* A page with an error message and status. */
void web_error_page(page *p, unsigned status, const char *text);
/* Renders the page of r's data route with slot s into p. */
void web_render(tb_webapp *app, slot *s, struct MHD_Connection *c, req *r, page *p);

#endif
