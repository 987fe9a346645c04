/*
 * tools.c: finding the servers' programs (tools.h).
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/tools.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sut/sut_internal.h"

static int is_exec_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Directory of the PostgreSQL server binaries (initdb, postgres). The
 * environment variable TB_PG_BINDIR wins; else the newest Debian cluster
 * version under /usr/lib/postgresql; else the PATH. */
int sut_find_pg_bindir(char *out, size_t len, char *err) {
    static const char hint[] = "install the Debian package postgresql (or set TB_PG_BINDIR)";
    char a[PATH_MAX], b[PATH_MAX];
    const char *env = getenv("TB_PG_BINDIR");
    if (env && *env) {
        if (sut_path_join(a, sizeof a, env, "initdb") == 0 && sut_path_join(b, sizeof b, env, "postgres") == 0 &&
            is_exec_file(a) && is_exec_file(b)) {
            sut_copy_str(out, len, env);
            return 0;
        }
        tb_seterr(err, "PostgreSQL server binaries not found (looked in TB_PG_BINDIR=%s); %s", env, hint);
        return -1;
    }

    long best = -1;
    DIR *d = opendir("/usr/lib/postgresql");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            char *end;
            long v = strtol(de->d_name, &end, 10);
            if (end == de->d_name || *end != '\0' || v <= best) continue;
            snprintf(a, sizeof a, "/usr/lib/postgresql/%s/bin/initdb", de->d_name);
            snprintf(b, sizeof b, "/usr/lib/postgresql/%s/bin/postgres", de->d_name);
            if (is_exec_file(a) && is_exec_file(b)) best = v;
        }
        closedir(d);
    }
    if (best >= 0) {
        snprintf(out, len, "/usr/lib/postgresql/%ld/bin", best);
        return 0;
    }

    const char *path = getenv("PATH");
    if (path) {
        char *copy = xstrdup(path), *save = NULL, *p;
        for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (sut_path_join(a, sizeof a, p, "initdb") == 0 && sut_path_join(b, sizeof b, p, "postgres") == 0 &&
                is_exec_file(a) && is_exec_file(b)) {
                sut_copy_str(out, len, p);
                free(copy);
                return 0;
            }
        }
        free(copy);
    }
    tb_seterr(err, "PostgreSQL server binaries not found (looked in /usr/lib/postgresql/*/bin and PATH); %s", hint);
    return -1;
}

/*
 * Finds an executable: $env_var when set (it must be executable), else the
 * first hit in dirs (NULL-terminated, tried in order; "PATH" stands for the
 * PATH entries). On failure err says where it looked and what to install.
 */
static int find_program(const char *name, const char *env_var, const char *const *dirs, const char *install, char *out,
                        size_t len, char *err) {
    char a[PATH_MAX], looked[256] = "";
    const char *env = getenv(env_var);
    if (env && *env) {
        if (is_exec_file(env)) {
            sut_copy_str(out, len, env);
            return 0;
        }
        tb_seterr(err, "%s not found (%s=%s is not an executable file)", name, env_var, env);
        return -1;
    }
    for (int d = 0; dirs[d]; d++) {
        const char *path = strcmp(dirs[d], "PATH") == 0 ? getenv("PATH") : dirs[d];
        char *copy, *save = NULL, *p;
        strncat(looked, d ? ", " : "", sizeof looked - strlen(looked) - 1);
        strncat(looked, dirs[d], sizeof looked - strlen(looked) - 1);
        if (!path) continue;
        copy = xstrdup(path);
        for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (sut_path_join(a, sizeof a, p, name) == 0 && is_exec_file(a)) {
                sut_copy_str(out, len, a);
                free(copy);
                return 0;
            }
        }
        free(copy);
    }
    tb_seterr(err, "%s not found (looked in %s); install %s (or set %s)", name, looked, install, env_var);
    return -1;
}

/* Path of redis-server: TB_REDIS_SERVER, else the PATH, /usr/bin, /usr/sbin. */
int sut_find_redis(char *out, size_t len, char *err) {
    static const char *const dirs[] = {"PATH", "/usr/bin", "/usr/sbin", NULL};
    return find_program("redis-server", "TB_REDIS_SERVER", dirs, "the Debian package redis-server", out, len, err);
}

/* Path of the dovecot master: TB_DOVECOT, else /usr/sbin/dovecot, else the PATH. */
int sut_find_dovecot(char *out, size_t len, char *err) {
    static const char *const dirs[] = {"/usr/sbin", "PATH", NULL};
    return find_program("dovecot", "TB_DOVECOT", dirs, "the Debian packages dovecot-imapd and dovecot-lmtpd", out, len,
                        err);
}
