/*
 * endpoints.h: where the SUT's services answer, as a tile file's [sut]
 * section states them (or the embedded SUT writes them to its sut.ini). The
 * load generator reads them; the embedded SUT fills them.
 */
#ifndef TB_TILES_ENDPOINTS_H
#define TB_TILES_ENDPOINTS_H

#include <stddef.h>

#include "common/tb_common.h"

/* Where the SUT's services answer. Empty string / 0 = service not present. */
#define TB_SUT_MAX_PG_TILES 64
#define TB_SUT_MAX_WEB_TILES 256

typedef struct tb_sut_endpoints {
    char pg_conninfo[512]; /* libpq conninfo without search_path, e.g.
                              "host=127.0.0.1 port=40123 dbname=tilebench user=tilebench" */
    /* Per-tile overrides ([sut] pg.tile2 = conninfo): that tile's OLTP data
     * lives on another server or database. Tiles not listed use pg_conninfo. */
    int n_pg_tile;
    struct {
        int tile;
        char conninfo[256];
    } pg_tile[TB_SUT_MAX_PG_TILES];
    char redis_host[128];
    int redis_port;
    /* Mail. Delivery goes to LMTP (LHLO) when lmtp_port is set, else to SMTP
     * (EHLO); the embedded SUT offers LMTP straight into Dovecot. */
    char imap_host[128];
    int imap_port;
    char lmtp_host[128];
    int lmtp_port;
    char smtp_host[128];
    int smtp_port;
    /* Login name of user u (1-based) of tile t: "%t" and "%u" replaced;
     * "" means the default "tile%t-user%u". */
    char mail_user[64];
    /* Recipient domain: RCPT TO:<login@mail_domain>; "" means bare logins. */
    char mail_domain[128];
    /* One password for every mail user (static passdb). Secret: never
     * written to results or reports. sut.ini names a file holding it
     * (mail_password_file) so that the tile text stored with a run carries
     * no password. */
    char mail_password[128];
    /* Web: the base URL of the web application ("http://HOST:PORT"), shared
     * by every tile unless that tile has its own ([sut] web.tileN = URL; the
     * embedded SUT runs one reference app process per tile). "" = none. */
    char web_url[128];
    int n_web_tile;
    struct {
        int tile;
        char url[128];
    } web_tile[TB_SUT_MAX_WEB_TILES];
} tb_sut_endpoints;

/* The web base URL for tile (1-based): its own web.tileN, else web_url;
 * NULL when neither is set. */
const char *tb_sut_web_url(const tb_sut_endpoints *ep, int tile);

/* The default mail login pattern: user u of tile t is "tile<t>-user<u>". */
#define TB_MAIL_USER_PATTERN "tile%t-user%u"

/* Reads a password from the first line of path (without its line end) into
 * out (len bytes): the [sut] mail_password_file key. 0, or -1 with err when
 * the file is unreadable, empty or the password does not fit. */
int tb_sut_read_password_file(const char *path, char *out, size_t len, char *err) TB_WUR;

/* Writes the login name of user (1-based) of tile (1-based) into out (len
 * bytes): pattern with "%t" -> tile and "%u" -> user, "%%" -> "%"; an empty
 * pattern means "tile%t-user%u". Example: tile 2, user 7 -> "tile2-user7". */
void tb_sut_mail_user(const char *pattern, int tile, int user, char *out, size_t len);

#endif
