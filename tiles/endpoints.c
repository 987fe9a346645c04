/*
 * endpoints.c: lookups in the SUT endpoints (endpoints.h).
 */
#include "tiles/endpoints.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *tb_sut_web_url(const tb_sut_endpoints *ep, int tile) {
    for (int i = 0; i < ep->n_web_tile; i++)
        if (ep->web_tile[i].tile == tile) return ep->web_tile[i].url;
    return ep->web_url[0] ? ep->web_url : NULL;
}

int tb_sut_read_password_file(const char *path, char *out, size_t len, char *err) {
    char buf[256];
    size_t n;
    FILE *f = fopen(path, "r");
    if (!f) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
    n = strcspn(buf, "\r\n");
    buf[n] = '\0';
    if (n == 0 || n >= len) {
        tb_seterr(err, "%s: %s", path, n == 0 ? "empty (expected the password on its first line)" : "password too long");
        return -1;
    }
    memcpy(out, buf, n + 1);
    return 0;
}

void tb_sut_mail_user(const char *pattern, int tile, int user, char *out, size_t len) {
    size_t o = 0;
    if (len == 0) return;
    if (!pattern || !*pattern) pattern = TB_MAIL_USER_PATTERN;
    for (const char *p = pattern; *p && o + 1 < len; p++) {
        char num[16];
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 't') ins = num, snprintf(num, sizeof num, "%d", tile);
        else if (p[0] == '%' && p[1] == 'u') ins = num, snprintf(num, sizeof num, "%d", user);
        else if (p[0] == '%' && p[1] == '%') ins = "%";
        if (ins) {
            p++;
            for (; *ins && o + 1 < len; ins++) out[o++] = *ins;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}
