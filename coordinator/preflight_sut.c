/*
 * preflight_sut.c: `tilebench doctor`'s SUT checks (preflight.h). With no
 * [sut] section the run starts the embedded SUT itself: its programs must be
 * installed. With one, each workload's servers must answer within 2 s and be
 * sized for the largest load level (PostgreSQL's max_connections and each
 * tile's data, Redis's maxclients, the mail servers' greetings), and then
 * pass the run's own SUT-ready check (each workload's probe) as well.
 */
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/preflight.h"
#include "loadgen/loadgen.h"
#include "powermeter/linesock.h"
#include "sut/sut.h"
#include "sut/tools.h"

#define PF_CONNECT_S  "2"
#define PF_TIMEOUT_US 2000000ull

/* The embedded SUT: run starts it, so its programs must be there. */
static void check_embedded(tb_pf_report *r, int tiles) {
    char pg[512], redis[512], dovecot[512], err[TB_ERR_LEN];
    if (sut_find_pg_bindir(pg, sizeof pg, err) != 0 || sut_find_redis(redis, sizeof redis, err) != 0 ||
        sut_find_dovecot(dovecot, sizeof dovecot, err) != 0) {
        tb_pf_add(r, "sut", TB_PF_FAIL, "embedded: %s", err);
        return;
    }
    tb_pf_add(r, "sut", TB_PF_OK,
              "embedded (no [sut] section): run starts PostgreSQL (%s, max_connections %d), Redis (%s) and Dovecot "
              "(%s) on loopback with data for %d tile%s",
              pg, tb_sut_pg_max_connections(tiles), redis, dovecot, tiles, tiles == 1 ? "" : "s");
}

/* Tile t's conninfo: its own pg.tileN, else [sut] pg. */
static const char *tile_conninfo(const tb_sut_endpoints *ep, int t) {
    for (int i = 0; i < ep->n_pg_tile; i++)
        if (ep->pg_tile[i].tile == t) return ep->pg_tile[i].conninfo;
    return tb_ep_str(ep->pg_conninfo);
}

/* PostgreSQL of the largest tile: max_connections and its rows, in 2 s;
 * 0 with detail, or -1 with the failure in detail. */
static int pg_size(const tb_sut_endpoints *ep, int tiles, int users, char *detail, size_t len) {
    const char *keys[] = {"dbname", "application_name", "connect_timeout", NULL};
    const char *vals[] = {tile_conninfo(ep, tiles), "tilebench-doctor", PF_CONNECT_S, NULL};
    PGconn *conn;
    PGresult *res;
    char sql[128];
    int rc = 0;
    if (!*vals[0]) {
        snprintf(detail, len, "tile %d has no PostgreSQL endpoint ([sut] pg = conninfo, or pg.tile%d)", tiles, tiles);
        return -1;
    }
    conn = PQconnectdbParams(keys, vals, 1);
    if (PQstatus(conn) != CONNECTION_OK) {
        snprintf(detail, len, "connect: %s", PQerrorMessage(conn)); /* libpq never shows the password */
        PQfinish(conn);
        return -1;
    }
    snprintf(sql, sizeof sql, "SELECT current_setting('max_connections'), (SELECT count(*) FROM tile%d.products)",
             tiles);
    res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        snprintf(detail, len, "%s:%s: tile %d has no OLTP data (%s); load it with `tilebench sut up --tiles %d`",
                 PQhost(conn), PQport(conn), tiles,
                 PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
                                                                  : "no reply",
                 tiles);
        rc = -1;
    } else {
        snprintf(detail, len,
                 "PostgreSQL %s:%s: max_connections %s for %d users x %d tiles; tile%d.products holds %s rows",
                 PQhost(conn), PQport(conn), PQgetvalue(res, 0, 0), users, tiles, tiles, PQgetvalue(res, 0, 1));
    }
    PQclear(res);
    PQfinish(conn);
    return rc;
}

/* Redis: answers in 2 s; maxclients against the level's kv users; keys. */
static int kv_size(const tb_sut_endpoints *ep, int tiles, int users, char *detail, size_t len) {
    struct timeval tv = {2, 0};
    redisContext *c;
    redisReply *mc, *ks;
    long long maxc = -1, need = (long long)users * tiles;
    int rc = 0;
    if (!tb_ep_has(ep->redis_host)) {
        snprintf(detail, len, "no Redis endpoint ([sut] redis = HOST:PORT)");
        return -1;
    }
    c = redisConnectWithTimeout(ep->redis_host, ep->redis_port, tv);
    if (!c || c->err) {
        snprintf(detail, len, "connect %s:%d: %s", ep->redis_host, ep->redis_port, c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return -1;
    }
    redisSetTimeout(c, tv);
    mc = redisCommand(c, "CONFIG GET maxclients");
    if (mc && mc->type == REDIS_REPLY_ARRAY && mc->elements == 2 && mc->element[1]->type == REDIS_REPLY_STRING)
        maxc = atoll(mc->element[1]->str);
    ks = redisCommand(c, "DBSIZE");
    if (!ks || ks->type != REDIS_REPLY_INTEGER) {
        snprintf(detail, len, "%s:%d: DBSIZE: %s", ep->redis_host, ep->redis_port,
                 ks && ks->type == REDIS_REPLY_ERROR ? ks->str : c->errstr);
        rc = -1;
    } else if (maxc >= 0 && maxc < need) {
        snprintf(detail, len, "%s:%d: maxclients %lld, but %d users x %d tiles need %lld connections", ep->redis_host,
                 ep->redis_port, maxc, users, tiles, need);
        rc = -1;
    } else {
        char m[32] = "unknown (CONFIG refused)";
        if (maxc >= 0) snprintf(m, sizeof m, "%lld", maxc);
        snprintf(detail, len, "Redis %s:%d: maxclients %s for %d users x %d tiles; %lld keys", ep->redis_host,
                 ep->redis_port, m, users, tiles, ks->integer);
    }
    if (mc) freeReplyObject(mc);
    if (ks) freeReplyObject(ks);
    redisFree(c);
    return rc;
}

/* One mail server's greeting ("* OK" for IMAP, "220" for LMTP/SMTP) in 2 s. */
static int greeting(const char *what, const char *host, int port, const char *want, char *out, size_t len) {
    tb_linesock *ls = NULL;
    char p[16], line[512], err[TB_ERR_LEN];
    int n;
    snprintf(p, sizeof p, "%d", port);
    if (tb_linesock_connect(host, p, PF_TIMEOUT_US, &ls, err) != 0) {
        snprintf(out, len, "%s: %s", what, err);
        return -1;
    }
    n = tb_linesock_readline(ls, line, sizeof line, PF_TIMEOUT_US, err);
    tb_linesock_close(ls);
    if (n < 0 || strncmp(line, want, strlen(want)) != 0) {
        snprintf(out, len, "%s %s:%d: no '%s' greeting within 2 s%s%s", what, host, port, want, n < 0 ? ": " : "",
                 n < 0 ? err : "");
        return -1;
    }
    snprintf(out, len, "%s %s:%d answers", what, host, port);
    return 0;
}

static int mail_size(const tb_sut_endpoints *ep, char *detail, size_t len) {
    char a[300], b[300];
    int lmtp = ep->lmtp_port > 0;
    if (!tb_ep_has(ep->imap_host) || (!lmtp && !tb_ep_has(ep->smtp_host))) {
        snprintf(detail, len, "mail needs [sut] imap and lmtp (or smtp)");
        return -1;
    }
    if (greeting("IMAP", ep->imap_host, ep->imap_port, "* OK", a, sizeof a) != 0 ||
        greeting(lmtp ? "LMTP" : "SMTP", lmtp ? ep->lmtp_host : ep->smtp_host, lmtp ? ep->lmtp_port : ep->smtp_port,
                 "220", b, sizeof b) != 0) {
        snprintf(detail, len, "%s", strstr(a, "answers") ? b : a);
        return -1;
    }
    snprintf(detail, len, "%s", a);
    strncat(detail, "; ", len - strlen(detail) - 1);
    strncat(detail, b, len - strlen(detail) - 1);
    return 0;
}

/* One workload: the preflight's own bounded look, then the run's probe. */
static void check_workload(tb_pf_report *r, const tb_tiledef *def, int w, int tiles) {
    const tb_workload_def *wd = &def->workloads[w];
    const tb_workload_vt *vt = tb_workload_find(wd->kind);
    char name[TB_PF_NAME_LEN], detail[TB_PF_DETAIL_LEN - 64] = "", err[TB_ERR_LEN];
    void *cfg = NULL;
    int rc = 0;
    snprintf(name, sizeof name, "sut.%s", wd->name);
    if (!vt || vt->configure(wd, &def->sut, &cfg, err) != 0) {
        tb_pf_add(r, name, TB_PF_FAIL, "%s", vt ? err : "unknown kind");
        return;
    }
    if (strcmp(wd->kind, "oltp") == 0)
        rc = pg_size(&def->sut, tiles, wd->users, detail, sizeof detail);
    else if (strcmp(wd->kind, "kv") == 0)
        rc = kv_size(&def->sut, tiles, wd->users, detail, sizeof detail);
    else if (strcmp(wd->kind, "mail") == 0)
        rc = mail_size(&def->sut, detail, sizeof detail);
    if (rc == 0 && vt->probe && vt->probe(cfg, tiles, err) != 0) {
        snprintf(detail, sizeof detail, "%s", err);
        rc = -1;
    } else if (rc == 0 && !detail[0]) {
        snprintf(detail, sizeof detail, "tiles 1..%d answer", tiles);
    }
    vt->cfg_free(cfg);
    tb_pf_add(r, name, rc ? TB_PF_FAIL : TB_PF_OK, "%s%s", detail,
              rc ? "" : (vt->probe ? " (SUT-ready check passed)" : ""));
}

void tb_pf_sut(tb_pf_report *r, const tb_tiledef *def, int tiles) {
    if (!def->has_sut) {
        check_embedded(r, tiles);
        return;
    }
    for (int w = 0; w < def->n_workloads; w++)
        if (def->workloads[w].users > 0) check_workload(r, def, w, tiles);
}
