/*
 * util.c: helpers the kinds of infrastructure operations share
 * (infra_internal.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infra/infra_internal.h"

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D) return rmdir(path) != 0 && errno != ENOENT ? -1 : 0;
    return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
}

int infra_remove_tree(const char *path) {
    struct stat sb;
    if (!path || !*path) return 0;
    if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode)) return unlink(path);
    /* a folder of 0700 made by another account (postgres): root reads it anyway */
    return nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) != 0 ? -1 : 0;
}

static uint64_t tree_total;
static int add_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode)) tree_total += (uint64_t)sb->st_size;
    return 0;
}

uint64_t infra_tree_bytes(const char *path) {
    /* nftw has no user argument: one walk at a time */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    uint64_t n;
    pthread_mutex_lock(&mu);
    tree_total = 0;
    (void)nftw(path, add_one, 32, FTW_PHYS);
    n = tree_total;
    pthread_mutex_unlock(&mu);
    return n;
}

uint64_t infra_left_us(uint64_t start_us, uint64_t budget_us) {
    uint64_t now = tb_now_us();
    return now - start_us >= budget_us ? 0 : budget_us - (now - start_us);
}

static int is_exec(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The newest N of /usr/lib/postgresql/N (with name in its bin when name is not
 * NULL), or -1. */
static long newest_pg(const char *name) {
    long best = -1;
    DIR *d = opendir("/usr/lib/postgresql");
    struct dirent *de;
    if (!d) return -1;
    while ((de = readdir(d)) != NULL) {
        char path[PATH_MAX], *end;
        long v = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end || v <= best) continue;
        snprintf(path, sizeof path, "/usr/lib/postgresql/%ld/bin/%s", v, name ? name : "");
        if (!name || is_exec(path)) best = v;
    }
    closedir(d);
    return best;
}

int infra_find_pg_program(const char *name, const char *pkg, char *out, size_t len, char *err) {
    const char *env = getenv("TB_PG_BINDIR"), *path = getenv("PATH");
    char pkgv[64];
    long v = newest_pg(name), any = newest_pg(NULL);
    if (any >= 0)
        snprintf(pkgv, sizeof pkgv, "%s-%ld", pkg, any);
    else
        snprintf(pkgv, sizeof pkgv, "%s", pkg);
    if (env && *env) {
        if (snprintf(out, len, "%s/%s", env, name) < (int)len && is_exec(out)) return 0;
        tb_seterr(err, "%s not found (in TB_PG_BINDIR=%s): install %s or fix TB_PG_BINDIR", name, env, pkgv);
        return -1;
    }
    if (v >= 0 && snprintf(out, len, "/usr/lib/postgresql/%ld/bin/%s", v, name) < (int)len) return 0;
    if (path) {
        char *copy = xstrdup(path), *save = NULL;
        for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
            if (snprintf(out, len, "%s/%s", p, name) < (int)len && is_exec(out)) {
                free(copy);
                return 0;
            }
        free(copy);
    }
    tb_seterr(err, "%s not found (in /usr/lib/postgresql/*/bin and the PATH): install %s", name, pkgv);
    return -1;
}

void infra_put_secs(tb_buf *b, const char *what, uint64_t us) {
    tb_buf_putf(b, "%s%s %.1f s", b->len ? ", " : "", what, (double)us / 1e6);
}

int infra_conninfo_quote(const char *value, char *out, size_t len) {
    size_t k = 0;
    if (len < 3) return -1;
    out[k++] = '\'';
    for (const char *p = value; *p; p++) {
        int esc = *p == '\'' || *p == '\\';
        if (k + (size_t)esc + 3 > len) return -1; /* room for it, the closing quote and NUL */
        if (esc) out[k++] = '\\';
        out[k++] = *p;
    }
    out[k++] = '\'';
    out[k] = '\0';
    return 0;
}
