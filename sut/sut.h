/*
 * sut.h: the embedded SUT for the standard tile: real servers from Debian's
 * packages (PostgreSQL, Redis, Dovecot) started on loopback in a run folder, each with
 * a pid file, waited on until it answers, and stopped exactly (only the pids
 * it started). `sut up` also creates the per-tile OLTP data (sut/oltp_load.h).
 * The endpoints are written to DIR/sut.ini as a [sut] section that a tile
 * config can carry, so `run` can also target servers that were not started
 * by tilebench.
 */
#ifndef TB_SUT_SUT_H
#define TB_SUT_SUT_H

#include <signal.h>
#include <stdio.h>

#include "common/tb_common.h"
#include "tiles/endpoints.h"

typedef struct tb_sut_options {
    const char *dir;             /* run folder; created if missing */
    int tiles;                   /* tiles to provision data for (>= 1) */
    int pg_port;                 /* 0 = pick a free loopback port */
    int redis_port;              /* 0 = pick a free loopback port */
    int web_users;               /* concurrent web users per tile: the reference web app's data
                                    holds 100 x this many persons (Olio); 0 = TB_WEB_DEFAULT_USERS (10) */
    volatile sig_atomic_t *stop; /* NULL, or set by SIGINT/SIGTERM: up gives up between two
                                    tiles' data loads and returns TB_SUT_EINTR */
    /* Dovecot's IMAP and LMTP ports are always free ports picked by up
     * (no fields here yet: cli/cmd_sut.c initializes this positionally). */
    const char *host; /* IPv4 address every server listens on and the endpoints name:
                         NULL = 127.0.0.1 (`sut up --listen`) */
} tb_sut_options;

/*
 * Starts PostgreSQL (initdb + pg_ctl, as user "postgres" when running as
 * root), redis-server and Dovecot (IMAP + LMTP; mail users tile<i>-user<j>
 * with one generated password, empty maildirs under DIR/mail) on opt->host
 * (127.0.0.1 when NULL; a bad address is TB_SUT_EUSAGE),
 * waits until each answers, loads the OLTP data for opt->tiles tiles, loads
 * the web data (schemas web<N>) and starts one reference web app process
 * per tile (`tilebench webapp`, this binary, on a free loopback port; at most
 * TB_SUT_MAX_WEB_TILES of them), waits until each answers /healthz, and
 * writes DIR/sut.ini (with web.tileN = http://HOST:PORT). *ep is filled
 * (free it with tb_endpoints_free). On any failure it stops whatever it had
 * started and *ep holds nothing. Returns 0, or:
 *   TB_SUT_EUSAGE  (bad option, port already in use, binary not installed),
 *   TB_SUT_ESTART  (a server failed to start or answer; err names it and
 *                   points at its log file),
 *   TB_SUT_EINTR   (*opt->stop was set while loading data: interrupted).
 */
enum { TB_SUT_EUSAGE = -2, TB_SUT_ESTART = -3, TB_SUT_EINTR = -4 };
int tb_sut_up(const tb_sut_options *opt, tb_sut_endpoints *ep, char *err) TB_WUR;

/* Stops every server started in dir (by its pid file), waiting for exit.
 * 0 when all are stopped (or none was running), -1 with err otherwise. */
int tb_sut_down(const char *dir, char *err) TB_WUR;

/* Prints one line per service: name, pid, endpoint, up/down. Returns the
 * number of services down (0 = all up), or -1 with err when dir holds no SUT. */
int tb_sut_status(const char *dir, FILE *f, char *err);

/* PostgreSQL's max_connections in an embedded SUT of `tiles` tiles: 100 +
 * 20 per tile, at most 10000 (see sut/postgres.c). */
int tb_sut_pg_max_connections(int tiles);

#endif
