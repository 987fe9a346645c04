/*
 * endpoints.c: the SUT endpoints (endpoints.h): their heap strings and lookups.
 */
#include "tiles/endpoints.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

void tb_endpoints_set(char **field, const char *val) {
    free(*field);
    *field = dup_or_null(val);
}

void tb_endpoints_add_pg_tile(tb_sut_endpoints *ep, int tile, const char *conninfo) {
    ep->pg_tile = xrealloc(ep->pg_tile, (size_t)(ep->n_pg_tile + 1) * sizeof *ep->pg_tile);
    ep->pg_tile[ep->n_pg_tile].tile = tile;
    ep->pg_tile[ep->n_pg_tile++].conninfo = xstrdup(conninfo);
}

void tb_endpoints_add_web_tile(tb_sut_endpoints *ep, int tile, const char *url) {
    ep->web_tile = xrealloc(ep->web_tile, (size_t)(ep->n_web_tile + 1) * sizeof *ep->web_tile);
    ep->web_tile[ep->n_web_tile].tile = tile;
    ep->web_tile[ep->n_web_tile++].url = xstrdup(url);
}

void tb_endpoints_copy(tb_sut_endpoints *dst, const tb_sut_endpoints *src) {
    *dst = *src; /* the ports and counts; every pointer is replaced below */
    dst->pg_conninfo = dup_or_null(src->pg_conninfo);
    dst->pg_tile = NULL;
    dst->n_pg_tile = 0;
    for (int i = 0; i < src->n_pg_tile; i++)
        tb_endpoints_add_pg_tile(dst, src->pg_tile[i].tile, src->pg_tile[i].conninfo);
    dst->redis_host = dup_or_null(src->redis_host);
    dst->imap_host = dup_or_null(src->imap_host);
    dst->lmtp_host = dup_or_null(src->lmtp_host);
    dst->smtp_host = dup_or_null(src->smtp_host);
    dst->mail_user = dup_or_null(src->mail_user);
    dst->mail_domain = dup_or_null(src->mail_domain);
    dst->mail_password = dup_or_null(src->mail_password);
    dst->web_url = dup_or_null(src->web_url);
    dst->web_tile = NULL;
    dst->n_web_tile = 0;
    for (int i = 0; i < src->n_web_tile; i++)
        tb_endpoints_add_web_tile(dst, src->web_tile[i].tile, src->web_tile[i].url);
}

void tb_endpoints_free(tb_sut_endpoints *ep) {
    if (!ep) return;
    free(ep->pg_conninfo);
    for (int i = 0; i < ep->n_pg_tile; i++)
        free(ep->pg_tile[i].conninfo);
    free(ep->pg_tile);
    free(ep->redis_host);
    free(ep->imap_host);
    free(ep->lmtp_host);
    free(ep->smtp_host);
    free(ep->mail_user);
    free(ep->mail_domain);
    free(ep->mail_password);
    free(ep->web_url);
    for (int i = 0; i < ep->n_web_tile; i++)
        free(ep->web_tile[i].url);
    free(ep->web_tile);
    memset(ep, 0, sizeof *ep);
}

const char *tb_sut_web_url(const tb_sut_endpoints *ep, int tile) {
    for (int i = 0; i < ep->n_web_tile; i++)
        if (ep->web_tile[i].tile == tile) return ep->web_tile[i].url;
    return tb_ep_has(ep->web_url) ? ep->web_url : NULL;
}

int tb_sut_read_password_file(const char *path, char **out, char *err) {
    char buf[256];
    size_t n;
    struct stat sb;
    FILE *f;
    /* a regular file only: a folder would read as empty, a FIFO would block */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        tb_seterr(err, "%.100s: not a regular file (expected the password on its first line)", path);
        return -1;
    }
    if (!(f = fopen(path, "r"))) {
        tb_seterr(err, "%.100s: %s", path, strerror(errno));
        return -1;
    }
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
    n = strcspn(buf, "\r\n");
    buf[n] = '\0';
    if (n == 0 || n >= TB_SUT_MAX_PASSWORD) {
        tb_seterr(err, "%.100s: %s", path,
                  n == 0 ? "empty (expected the password on its first line)" : "password too long");
        return -1;
    }
    tb_endpoints_set(out, buf);
    return 0;
}

void tb_sut_mail_user(const char *pattern, int tile, int user, char *out, size_t len) {
    size_t o = 0;
    if (len == 0) return;
    if (!pattern || !*pattern) pattern = TB_MAIL_USER_PATTERN;
    for (const char *p = pattern; *p && o + 1 < len; p++) {
        char num[16];
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 't')
            ins = num, snprintf(num, sizeof num, "%d", tile);
        else if (p[0] == '%' && p[1] == 'u')
            ins = num, snprintf(num, sizeof num, "%d", user);
        else if (p[0] == '%' && p[1] == '%')
            ins = "%";
        if (ins) {
            p++;
            for (; *ins && o + 1 < len; ins++)
                out[o++] = *ins;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}
