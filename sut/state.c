/*
 * state.c: DIR/sut.state, the record of the servers `sut up` started (pid,
 * start time, port and executable of each, plus the /tmp folders it made),
 * and stopping exactly those.
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "sut/sut_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const sut_svc_names[SVC_N] = {"postgresql", "redis", "dovecot"};

void sut_state_free(sut_state *st) {
    free(st->web);
    st->web = NULL;
    st->n_web = 0;
}

/* web[tile-1], growing the array as needed. */
svc *sut_state_web(sut_state *st, int tile) {
    if (tile > st->n_web) {
        st->web = xrealloc(st->web, (size_t)tile * sizeof *st->web);
        memset(st->web + st->n_web, 0, (size_t)(tile - st->n_web) * sizeof *st->web);
        st->n_web = tile;
    }
    return &st->web[tile - 1];
}
/* ---- state file --------------------------------------------------------- */

int sut_write_state(const char *dir, const sut_state *st, char *err) {
    char path[PATH_MAX], tmp[PATH_MAX];
    FILE *f;
    int i;
    if (sut_path_join(path, sizeof path, dir, "sut.state") != 0 ||
        sut_path_join(tmp, sizeof tmp, dir, "sut.state.tmp") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    f = fopen(tmp, "w");
    if (!f) {
        tb_seterr(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# tilebench sut state: the servers `tilebench sut up` started in this folder.\n"
               "# `tilebench sut down` stops exactly these (pid, start time and executable must match).\n"
               "# service pid start_ticks port executable\n");
    for (i = 0; i < SVC_N; i++)
        if (st->s[i].present)
            fprintf(f, "%s %ld %llu %d %s\n", sut_svc_names[i], (long)st->s[i].pid, st->s[i].start_ticks, st->s[i].port,
                    st->s[i].exe);
    for (i = 0; i < st->n_web; i++)
        if (st->web[i].present)
            fprintf(f, "web.tile%d %ld %llu %d %s\n", i + 1, (long)st->web[i].pid, st->web[i].start_ticks,
                    st->web[i].port, st->web[i].exe);
    if (st->sockdir[0]) fprintf(f, "sockdir %s\n", st->sockdir);
    if (st->dovecot_base[0]) fprintf(f, "dovecot_base %s\n", st->dovecot_base);
    if (st->lmtp_port > 0) fprintf(f, "lmtp_port %d\n", st->lmtp_port);
    if (st->host[0]) fprintf(f, "host %s\n", st->host);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* 0 = read, 1 = no state file, -1 = unreadable or malformed (err set). */
int sut_read_state(const char *dir, sut_state *st, char *err) {
    char path[PATH_MAX], line[PATH_MAX + 128];
    FILE *f;
    int lineno = 0;
    memset(st, 0, sizeof *st);
    if (sut_path_join(path, sizeof path, dir, "sut.state") != 0) {
        tb_seterr(err, "%s: path too long", dir);
        return -1;
    }
    f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        tb_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char name[32];
        long pid;
        unsigned long long start;
        int port, off = 0, i;
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        if (strncmp(line, "sockdir ", 8) == 0) {
            sut_copy_str(st->sockdir, sizeof st->sockdir, line + 8);
            continue;
        }
        if (strncmp(line, "dovecot_base ", 13) == 0) {
            sut_copy_str(st->dovecot_base, sizeof st->dovecot_base, line + 13);
            continue;
        }
        if (strncmp(line, "lmtp_port ", 10) == 0) {
            st->lmtp_port = atoi(line + 10);
            continue;
        }
        if (strncmp(line, "host ", 5) == 0) {
            sut_copy_str(st->host, sizeof st->host, line + 5);
            continue;
        }
        if (sscanf(line, "%31s %ld %llu %d %n", name, &pid, &start, &port, &off) != 4 || off == 0 || pid <= 0) {
            tb_seterr(err, "%s:%d: malformed line", path, lineno);
            fclose(f);
            return -1;
        }
        svc *sv = NULL;
        for (i = 0; i < SVC_N; i++)
            if (strcmp(name, sut_svc_names[i]) == 0) sv = &st->s[i];
        if (!sv && strncmp(name, "web.tile", 8) == 0) {
            char *end;
            long t = strtol(name + 8, &end, 10);
            if (*end == '\0' && t >= 1 && t <= SUT_MAX_TILES) sv = sut_state_web(st, (int)t);
        }
        if (!sv) {
            tb_seterr(err, "%s:%d: unknown service '%s'", path, lineno, name);
            fclose(f);
            sut_state_free(st);
            return -1;
        }
        sv->present = 1;
        sv->pid = (pid_t)pid;
        sv->start_ticks = start;
        sv->port = port;
        sut_copy_str(sv->exe, sizeof sv->exe, line + off);
    }
    fclose(f);
    return 0;
}

/* Removes a /tmp socket folder made by up, with the files a killed postmaster leaves. */
void sut_remove_sockdir(const char *sockdir, int port) {
    char p[PATH_MAX + 32];
    if (!sockdir[0]) return;
    snprintf(p, sizeof p, "%s/.s.PGSQL.%d", sockdir, port);
    unlink(p);
    snprintf(p, sizeof p, "%s/.s.PGSQL.%d.lock", sockdir, port);
    unlink(p);
    rmdir(sockdir);
}

/* Removes a /tmp/tilebench-dovecot-XXXXXX base we made, and nothing else: the
 * path comes from DIR/sut.state, which must not be able to name any folder. */
void sut_remove_dovecot_base(const char *path) {
    static const char prefix[] = "/tmp/tilebench-dovecot-";
    if (!path || !*path) return;
    if (strncmp(path, prefix, sizeof prefix - 1) != 0 || strlen(path) != sizeof prefix - 1 + 6 ||
        strchr(path + sizeof prefix - 1, '/')) {
        tb_log(TB_LOG_WARN, "sut: not removing '%s' named in sut.state: not a folder tilebench makes", path);
        return;
    }
    sut_remove_tree(path);
}

/* Stops every service in st, newest first. 0 or -1 with err (first failure). */
int sut_stop_all(const sut_state *st_in, char *err) {
    sut_state st = *st_in;
    char e[TB_ERR_LEN] = "";
    int rc = 0;
    /* The web apps first: they are clients of PostgreSQL and Redis. */
    for (int t = 0; t < st.n_web; t++) {
        char name[32];
        svc w = st.web[t];
        snprintf(name, sizeof name, "web.tile%d", t + 1);
        if (w.present && sut_svc_stop(name, &w, SIGTERM, e) != 0) {
            if (rc == 0) tb_seterr(err, "%s", e);
            rc = -1;
        }
    }
    /* SIGTERM to the dovecot master stops its children too (imap, lmtp, auth). */
    if (st.s[SVC_DOVECOT].present && sut_svc_stop(sut_svc_names[SVC_DOVECOT], &st.s[SVC_DOVECOT], SIGTERM, e) != 0) {
        tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (st.s[SVC_PG].present && sut_svc_stop(sut_svc_names[SVC_PG], &st.s[SVC_PG], SIGINT, e) != 0) {
        if (rc == 0) tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (st.s[SVC_REDIS].present && sut_svc_stop(sut_svc_names[SVC_REDIS], &st.s[SVC_REDIS], SIGTERM, e) != 0) {
        if (rc == 0) tb_seterr(err, "%s", e);
        rc = -1;
    }
    if (rc == 0) sut_remove_sockdir(st.sockdir, st.s[SVC_PG].port);
    if (rc == 0) sut_remove_dovecot_base(st.dovecot_base);
    return rc;
}
