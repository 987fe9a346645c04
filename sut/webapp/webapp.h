/*
 * webapp.h: the reference web application (an Olio-like social-events site)
 * that the embedded SUT runs once per tile, as VMmark 2 shipped Olio. HTTP/1.1
 * with keep-alive on libmicrohttpd (a thread pool), data in PostgreSQL schema
 * web<N> (sut/web_load.h) through libpq prepared statements, sessions and
 * the home-page cache in Redis (keys "web<N>:...") through hiredis.
 *
 * The HTTP contract (pages, markers, service endpoints, error statuses) is
 * docs/webapp.md; the client side is loadgen's web workload.
 */
#ifndef TB_SUT_WEBAPP_H
#define TB_SUT_WEBAPP_H

#include <stdint.h>

#include "common/tb_common.h"

#define TB_WEBAPP_DEFAULT_THREADS 4
#define TB_WEBAPP_MAX_THREADS     256
#define TB_WEBAPP_MAX_BODY        (1024 * 1024) /* bytes of a POST body; more gets 413 */
#define TB_WEBAPP_MAX_IMAGE       (512 * 1024)  /* bytes of AddPerson's image part; more gets 413 */
#define TB_WEBAPP_SESSION_TTL_S   1800          /* a login session lives 30 min in Redis */
#define TB_WEBAPP_HOME_TTL_S      300           /* the cached home page, unless AddEvent drops it first */

typedef struct tb_webapp_config {
    const char *host;        /* listen address, IPv4 literal, e.g. "127.0.0.1" */
    int port;                /* 1..65535 */
    const char *pg_conninfo; /* libpq conninfo of the database holding schema web<tile> */
    int tile;                /* >= 1 */
    const char *redis_host;
    int redis_port;
    int threads; /* HTTP worker threads = database and Redis connections; 0 = default */
} tb_webapp_config;

typedef struct tb_webapp tb_webapp;

/*
 * Connects `threads` PostgreSQL and Redis connections (one per worker, so a
 * request never waits for a connection or sets one up), checks that schema
 * web<tile> holds loaded data, prepares the statements, binds host:port and
 * starts serving. Returns 0, or -1 with err naming what failed
 * ("webapp tile 2: schema web2 is not loaded: ...", "listen 127.0.0.1:80:
 * Address already in use"). *out is freed with tb_webapp_close.
 */
int tb_webapp_open(const tb_webapp_config *cfg, tb_webapp **out, char *err) TB_WUR;

/* Requests served since open, as /stats reports them (every request that
 * reached the application except /stats and /healthz). */
uint64_t tb_webapp_requests(tb_webapp *app);

/* Stops serving (waits for the worker threads), closes every connection,
 * frees app. NULL is a no-op. */
void tb_webapp_close(tb_webapp *app);

#endif
