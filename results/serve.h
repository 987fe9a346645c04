/*
 * serve.h: `tilebench serve`, a read-only web server over a results database
 * (libmicrohttpd). It publishes the run list, each run's HTML report, its
 * JSON and CSV, a comparison of chosen runs and a JSON API, rendered by the
 * report module on every request from a fresh read-only connection, so the
 * levels a running sweep commits appear on reload. It never writes the
 * database and never touches the filesystem otherwise: every URL is matched
 * against a fixed set of routes with strictly parsed run ids, so a path
 * cannot traverse anywhere.
 */
#ifndef TB_RESULTS_SERVE_H
#define TB_RESULTS_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/tb_common.h"

#define TB_SERVE_DEFAULT_LISTEN "127.0.0.1:8080"
#define TB_SERVE_HOST_LEN       256
#define TB_SERVE_MAX_COMPARE    16 /* runs in one /compare */

typedef struct tb_serve tb_serve;

/* What a URL path names. Ids are 1..INT64_MAX, plain decimal digits with no
 * sign, no leading zero and nothing after; anything else is TB_ROUTE_NONE. */
typedef enum {
    TB_ROUTE_NONE = 0, /* 404 */
    TB_ROUTE_INDEX,    /* "/": the run list (HTML) */
    TB_ROUTE_RUN_HTML, /* "/runs/ID" */
    TB_ROUTE_RUN_JSON, /* "/runs/ID.json" */
    TB_ROUTE_RUN_CSV,  /* "/runs/ID.csv" */
    TB_ROUTE_COMPARE,  /* "/compare" (runs and baseline in the query) */
    TB_ROUTE_API_RUNS, /* "/api/runs": the run list (JSON) */
    TB_ROUTE_API_RUN,  /* "/api/runs/ID": the JSON report */
} tb_serve_route;

/* Matches a decoded URL path (no query) to a route; *run_id is set for the
 * routes that carry one. Pure: no I/O. */
tb_serve_route tb_serve_match(const char *path, int64_t *run_id);

/*
 * Parses /compare's run list: comma-separated ids ("1,2,3"), appended to
 * ids[*n] (cap TB_SERVE_MAX_COMPARE) so repeated runs=... parameters (a form
 * with checkboxes) add up; duplicates are dropped. 0, or -1 with err naming
 * the bad value.
 */
int tb_serve_parse_run_list(const char *s, int64_t *ids, int *n, char *err) TB_WUR;

typedef struct tb_serve_opts {
    const char *db_path; /* results database, opened read-only per request */
    const char *host;    /* listen address (see tb_listen_parse, common/listen.h) */
    int port;            /* 0: any free port (tb_serve_port tells which) */
} tb_serve_opts;

/*
 * Binds host:port (SO_REUSEADDR, so a restart does not wait out TIME_WAIT)
 * and starts serving on libmicrohttpd's threads (one per connection, capped).
 * The database need not exist yet: requests then get a 503 page saying so.
 * Returns 0, or -1 with err: "listen 127.0.0.1:8080: Address already in use",
 * "listen 'nohost': Name or service not known", ...
 */
int tb_serve_start(const tb_serve_opts *o, tb_serve **out, char *err) TB_WUR;

/* The bound port (the kernel's choice when opts.port was 0). */
int tb_serve_port(const tb_serve *s);

/* The bound address as "127.0.0.1:8080" or "[::1]:8080" into buf. */
void tb_serve_address(const tb_serve *s, char *buf, size_t len);

/* Stops accepting, waits for the requests in flight, frees. NULL is a no-op. */
void tb_serve_stop(tb_serve *s);

#endif
