/*
 * sut_internal.h: what the pieces of the embedded SUT share (sut/sut.c
 * orchestrates; sut/postgres.c, sut/redis.c, sut/dovecot.c and
 * sut/webapps.c start one kind of server each; sut/state.c keeps the record
 * of what was started). Not for callers outside sut/: they use sut/sut.h.
 */
#ifndef TB_SUT_SUT_INTERNAL_H
#define TB_SUT_SUT_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tb_common.h"
#include "sut/supervisor.h"
#include "sut/sut.h"

#define SUT_PG_USER "tilebench" /* database superuser created by initdb */
#define SUT_PG_DB   "tilebench"
/* The reference web app's database: its own, so that the OLTP database's
 * counters (pg_stat_database) count the OLTP workload alone. */
#define SUT_PG_WEB_DB     "tilebench_web"
#define SUT_OS_PG_USER    "postgres" /* Debian's account for the server under root */
#define SUT_MAX_TILES     1000
#define SUT_UNIX_PATH_MAX 107 /* sizeof(sun_path) - 1 on Linux */

/* Mail users of the embedded Dovecot: the account that owns the maildirs
 * (mail users may not be root) and the recipient domain. */
#define SUT_MAIL_OWNER        "nobody"
#define SUT_MAIL_GROUP        "nogroup"
#define SUT_MAIL_DOMAIN       "tilebench.test"
#define SUT_MAIL_USER_PATTERN TB_MAIL_USER_PATTERN
/* Longest socket name Dovecot 2.3 creates under base_dir
 * ("replication-notify-fifo", "token-login/tokenlogin") plus its slash. */
#define SUT_DOVECOT_SOCK_NAME_MAX 24

/* ---- small helpers (sut/util.c) ----------------------------------------- */

/* Copies src into dst (len bytes), truncating; always terminates. */
void sut_copy_str(char *dst, size_t len, const char *src);
/* Joins a and b with '/'; -1 when the result does not fit. */
int sut_path_join(char *out, size_t len, const char *a, const char *b);
/* mkdir -p, mode 0755 for every folder it creates. 0 or -1 with err. */
int sut_mkdir_p(const char *dir, char *err);
/* rm -rf path (no symlinks followed); "" is a no-op. 0 or -1 with errno. */
int sut_remove_tree(const char *path);
/* A socket connected to sut_host():port with 1 s send and receive timeouts, or -1. */
int sut_loopback_connect(int port);
/* 1 with err when a stop was asked for (loading 200 tiles takes minutes). */
int sut_interrupted(const tb_sut_options *opt, char *err);

/* ---- the record of started servers (sut/state.c) ------------------------ */

enum { SVC_PG = 0, SVC_REDIS = 1, SVC_DOVECOT = 2, SVC_N = 3 };
extern const char *const sut_svc_names[SVC_N];

typedef struct sut_state {
    svc s[SVC_N];
    /* The reference web app, one process per tile: web[i] serves tile i+1
     * (n_web entries, malloc'd; sut_state_free). */
    int n_web;
    svc *web;
    char sockdir[PATH_MAX];      /* a /tmp socket folder we made, "" when DIR/pg is used */
    char dovecot_base[PATH_MAX]; /* a /tmp base_dir we made, "" when DIR/dovecot is used */
    int lmtp_port;               /* Dovecot's second port, for status */
    char host[16];               /* the listen address (sut_host()), "" in a state file from before --listen */
} sut_state;

void sut_state_free(sut_state *st);
/* web[tile-1], growing the array as needed. */
svc *sut_state_web(sut_state *st, int tile);
/* Writes DIR/sut.state (through a temporary file). 0 or -1 with err. */
int sut_write_state(const char *dir, const sut_state *st, char *err);
/* 0 = read, 1 = no state file, -1 = unreadable or malformed (err set). */
int sut_read_state(const char *dir, sut_state *st, char *err);
/* Removes a /tmp socket folder made by up, with the files a killed postmaster leaves. */
void sut_remove_sockdir(const char *sockdir, int port);
/* Removes a /tmp/tilebench-dovecot-XXXXXX base made by up, and nothing else. */
void sut_remove_dovecot_base(const char *path);
/* Stops every service in st, newest first. 0 or -1 with err (first failure). */
int sut_stop_all(const sut_state *st, char *err);

/* ---- PostgreSQL (sut/postgres.c) ---------------------------------------- */

void sut_pg_ping_conninfo(char *out, size_t len, int port);
/* Checks, as ra's account, that every folder on the way to dir can be entered. */
int sut_check_traversable(const char *dir, const run_as *ra, char *err);
/* Runs initdb into datadir unless it already holds a cluster. 0 or TB_SUT_E*. */
int sut_pg_initdb(const char *bindir, const char *datadir, const char *logpath, const run_as *ra, char *err);
int sut_pg_start(const char *bindir, const char *datadir, const char *sockdir, int port, int tiles, const char *logpath,
                 const run_as *ra, svc *out, char *err);
int sut_pg_wait(const svc *s, const char *logpath, uint64_t deadline, char *err);
/* 1 when the postmaster on port accepts connections. */
int sut_pg_answers(int port);
/* Creates database db (a fixed identifier of ours) unless it exists. 0 or -1. */
int sut_pg_create_db(int port, const char *db, char *err);

/* ---- Redis (sut/redis.c) ------------------------------------------------ */

int sut_redis_write_conf(const char *dir, int port, char *err);
int sut_redis_start(const char *binary, const char *dir, int port, const char *logpath, svc *out, char *err);
/* 1 when redis on port answers PING with PONG. */
int sut_redis_ping(int port);
int sut_redis_wait(const svc *s, const char *logpath, uint64_t deadline, char *err);

/* ---- Dovecot (sut/dovecot.c) -------------------------------------------- */

/* The owner of the maildirs: nobody/nogroup under root, else the current user. */
typedef struct mail_owner {
    uid_t uid;
    gid_t gid;
    char user[64], group[64]; /* for default_internal_user and friends when not root */
} mail_owner;

/* 1 when sut_host():port greets with a line starting with prefix within a second. */
int sut_mail_greets(int port, const char *prefix);
int sut_mail_password_new(char *out, size_t len, char *err);
int sut_mail_secret_write(const char *dir, const char *password, char *err);
int sut_mail_owner_lookup(mail_owner *mo, char *err);
int sut_mail_dir_reset(const char *dir, const mail_owner *mo, char *err);
int sut_dovecot_write_conf(const char *dir, const char *base, int imap_port, int lmtp_port, const char *password,
                           const mail_owner *mo, char *err);
int sut_dovecot_start(const char *binary, const char *dir, int imap_port, const char *logpath, svc *out, char *err);
int sut_dovecot_wait(const svc *s, int lmtp_port, const char *logpath, uint64_t deadline, char *err);
/* 0 when p holds a character that would need quoting in dovecot.conf. */
int sut_conf_safe_path(const char *p);

/* ---- the reference web apps (sut/webapps.c) ----------------------------- */

/* 1 when GET /healthz on sut_host():port answers 200 within a second. */
int sut_web_healthy(int port);
/* Loads the web data and starts one web app per tile (at most
 * TB_SUT_MAX_WEB_TILES), waits until each answers, and adds their URLs to ep.
 * 0 or TB_SUT_E*. */
int sut_webapps_up(const tb_sut_options *opt, const char *dir, const char *web_conninfo, sut_state *st,
                   tb_sut_endpoints *ep, char *err);

#endif
