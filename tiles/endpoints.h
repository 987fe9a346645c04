/*
 * endpoints.h: where the SUT's services answer, as a tile file's [sut]
 * section states them (or the embedded SUT writes them to its sut.ini). The
 * load generator reads them; the embedded SUT fills them.
 */
#ifndef TB_TILES_ENDPOINTS_H
#define TB_TILES_ENDPOINTS_H

#include <stddef.h>

#include "common/tb_common.h"

/* The most a [sut] value may hold, its NUL included (a longer one is
 * refused as "too long"), and the most per-tile entries a file may give. */
#define TB_SUT_MAX_CONNINFO      512 /* pg */
#define TB_SUT_MAX_TILE_CONNINFO 256 /* pg.tileN */
#define TB_SUT_MAX_HOST          128 /* redis, imap, lmtp, smtp: the HOST of HOST:PORT */
#define TB_SUT_MAX_MAIL_USER     64
#define TB_SUT_MAX_MAIL_DOMAIN   128
#define TB_SUT_MAX_PASSWORD      128
#define TB_SUT_MAX_URL           128 /* web, web.tileN */
#define TB_SUT_MAX_PG_TILES      64
#define TB_SUT_MAX_WEB_TILES     256

/* One tile's own server: [sut] pg.tileN = conninfo, or web.tileN = URL. */
typedef struct tb_sut_pg_tile {
    int tile;       /* 1-based */
    char *conninfo; /* heap, owned */
} tb_sut_pg_tile;

typedef struct tb_sut_web_tile {
    int tile;  /* 1-based */
    char *url; /* heap, owned */
} tb_sut_web_tile;

/*
 * Where the SUT's services answer. Every string is on the heap, owned by the
 * struct; NULL (or "") = service not present, 0 = no port. The per-tile
 * arrays hold exactly what was given. Zero it to start; free it with
 * tb_endpoints_free; copy it with tb_endpoints_copy (a struct copy would
 * share the strings and free them twice).
 */
typedef struct tb_sut_endpoints {
    char *pg_conninfo; /* libpq conninfo without search_path, e.g.
                          "host=127.0.0.1 port=40123 dbname=tilebench user=tilebench" */
    /* Per-tile overrides ([sut] pg.tile2 = conninfo): that tile's OLTP data
     * lives on another server or database. Tiles not listed use pg_conninfo. */
    int n_pg_tile;
    tb_sut_pg_tile *pg_tile; /* n_pg_tile entries */
    char *redis_host;
    int redis_port;
    /* Mail. Delivery goes to LMTP (LHLO) when lmtp_port is set, else to SMTP
     * (EHLO); the embedded SUT offers LMTP straight into Dovecot. */
    char *imap_host;
    int imap_port;
    char *lmtp_host;
    int lmtp_port;
    char *smtp_host;
    int smtp_port;
    /* Login name of user u (1-based) of tile t: "%t" and "%u" replaced;
     * unset means the default "tile%t-user%u". */
    char *mail_user;
    /* Recipient domain: RCPT TO:<login@mail_domain>; unset means bare logins. */
    char *mail_domain;
    /* One password for every mail user (static passdb). Secret: never
     * written to results or reports. sut.ini names a file holding it
     * (mail_password_file) so that the tile text stored with a run carries
     * no password. */
    char *mail_password;
    /* Web: the base URL of the web application ("http://HOST:PORT"), shared
     * by every tile unless that tile has its own ([sut] web.tileN = URL; the
     * embedded SUT runs one reference app process per tile). */
    char *web_url;
    int n_web_tile;
    tb_sut_web_tile *web_tile; /* n_web_tile entries */
} tb_sut_endpoints;

/* Frees what *ep holds and zeroes it; again on a freed or zeroed one is harmless. */
void tb_endpoints_free(tb_sut_endpoints *ep);
/* *dst becomes a deep copy of *src (*dst is overwritten, not freed). */
void tb_endpoints_copy(tb_sut_endpoints *dst, const tb_sut_endpoints *src);
/* Replaces the string *field with a copy of val (NULL: unset). */
void tb_endpoints_set(char **field, const char *val);
/* Adds tile's own server (a copy of conninfo, of url) to ep's per-tile array. */
void tb_endpoints_add_pg_tile(tb_sut_endpoints *ep, int tile, const char *conninfo);
void tb_endpoints_add_web_tile(tb_sut_endpoints *ep, int tile, const char *url);
/* 1 when s holds a value (not NULL, not ""). */
static inline int tb_ep_has(const char *s) { return s && *s; }
/* s, or "" when unset: for printing and copying. */
static inline const char *tb_ep_str(const char *s) { return s ? s : ""; }

/* The web base URL for tile (1-based): its own web.tileN, else web_url;
 * NULL when neither is set. */
const char *tb_sut_web_url(const tb_sut_endpoints *ep, int tile);

/* The default mail login pattern: user u of tile t is "tile<t>-user<u>". */
#define TB_MAIL_USER_PATTERN "tile%t-user%u"

/* Reads a password from the first line of path (without its line end) into
 * *out, a heap string that replaces (and frees) the old one: the [sut]
 * mail_password_file key. 0, or -1 with err (*out kept) when the file is
 * unreadable, empty or the password is TB_SUT_MAX_PASSWORD bytes or longer. */
int tb_sut_read_password_file(const char *path, char **out, char *err) TB_WUR;

/* Writes the login name of user (1-based) of tile (1-based) into out (len
 * bytes): pattern with "%t" -> tile and "%u" -> user, "%%" -> "%"; an empty
 * pattern means "tile%t-user%u". Example: tile 2, user 7 -> "tile2-user7". */
void tb_sut_mail_user(const char *pattern, int tile, int user, char *out, size_t len);

#endif
