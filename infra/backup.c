/*
 * backup.c: the backup kind of infrastructure operation, a bulk copy of
 * live storage while the tiles run: pg_basebackup of the SUT's PostgreSQL
 * ([sut] pg) into the op's folder, with the WAL streamed beside it (-X
 * stream) and a fast checkpoint (-c fast), so it starts at once and holds a
 * consistent copy. With verify = yes, pg_verifybackup checks it against its
 * manifest (and its WAL) and its output is kept. The op's bytes are the
 * backup's size; then the runner removes it.
 *
 * No secret of [sut] pg reaches a command line: its parameters go into a
 * connection service file (mode 0600) in the op's folder, and pg_basebackup
 * is told only "service=tilebench" and, in its environment, the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/spawn.h"
#include "infra/infra_internal.h"

extern char **environ;

static int backup_check(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err) {
    char path[PATH_MAX], e[TB_ERR_LEN], *perr = NULL;
    PQconninfoOption *opts;
    if (!ep || !ep->pg_conninfo || !*ep->pg_conninfo) {
        tb_seterr(err, "backup: no PostgreSQL to back up: give [sut] pg (or let run start the embedded SUT)");
        return -1;
    }
    if (!(opts = PQconninfoParse(ep->pg_conninfo, &perr))) {
        tb_seterr(err, "backup: [sut] pg: not a valid connection string"); /* libpq's reason may quote it */
        PQfreemem(perr);
        return -1;
    }
    PQconninfoFree(opts);
    if (infra_find_pg_program("pg_basebackup", "postgresql-client", path, sizeof path, e) != 0 ||
        (d->verify && infra_find_pg_program("pg_verifybackup", "postgresql-client", path, sizeof path, e) != 0)) {
        tb_seterr(err, "backup: %s", e);
        return -1;
    }
    return 0;
}

/* Writes the conninfo's every parameter to a connection service file at path
 * (mode 0600, section [tilebench]: the PostgreSQL manual, "The Connection
 * Service File"), so the command line says only "service=tilebench" and no
 * secret (password, sslpassword) is on it. 0, or -1 with err. */
static int write_service(const char *conninfo, const char *path, char *err) {
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    FILE *f;
    int fd, rc = 0;
    if (!opts) {
        /* libpq's message may quote the conninfo: not shown */
        tb_seterr(err, "[sut] pg: not a valid connection string");
        PQfreemem(perr);
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        PQconninfoFree(opts);
        return -1;
    }
    fputs("[tilebench]\n", f);
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || strcmp(o->keyword, "service") == 0) continue;
        if (strpbrk(o->val, "\r\n")) {
            tb_seterr(err, "[sut] pg: %s: a line break in the value", o->keyword);
            rc = -1;
            break;
        }
        fprintf(f, "%s=%s\n", o->keyword, o->val);
    }
    PQconninfoFree(opts);
    if (fclose(f) != 0 && rc == 0) {
        tb_seterr(err, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* The parent's environment with PGSERVICEFILE=path (and no PGSERVICE or
 * PGPASSWORD of its own); the strings are the parent's, but for the last. */
static char **child_env(const char *path) {
    size_t n = 0, k = 0, len = strlen(path) + 16;
    char **env;
    while (environ[n])
        n++;
    env = xcalloc(n + 2, sizeof *env);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PGSERVICEFILE=", 14) != 0 && strncmp(environ[i], "PGSERVICE=", 10) != 0 &&
            strncmp(environ[i], "PGPASSWORD=", 11) != 0)
            env[k++] = environ[i];
    env[k] = xmalloc(len);
    snprintf(env[k], len, "PGSERVICEFILE=%s", path);
    env[k + 1] = NULL;
    return env;
}

static void free_env(char **env) {
    size_t n = 0;
    while (env[n])
        n++;
    if (n) free(env[n - 1]);
    free(env);
}

/* Runs argv to its end within the op's budget; its output into out->text
 * (prefixed by what) when it fails or keep is set. 0 when it exited 0. */
static int run_tool(const infra_op_ctx *c, infra_op_out *out, const char *const *argv, char **envp, const char *what,
                    uint64_t budget, int keep) {
    char e[TB_ERR_LEN], how[96];
    tb_spawn_opts so;
    tb_spawn_result r;
    int rc = 0;
    memset(&so, 0, sizeof so);
    so.path = argv[0];
    so.argv = argv;
    so.envp = envp;
    so.output_max = out->text.max > 256 ? out->text.max - 128 : out->text.max;
    so.timeout_us = budget ? budget : 1;
    so.new_group = 1;
    so.stop = c->stop;
    if (tb_spawn_run(&so, &r, e) != 0) {
        out->status = TB_OP_ERR_IO;
        tb_buf_putf(&out->text, "%s%s: %s", out->text.len ? "; " : "", what, e);
        rc = -1;
    } else if (!r.exited || r.exit_status != 0) {
        tb_spawn_describe(&r, &so, how, sizeof how);
        out->status = r.timed_out || r.stopped ? TB_OP_ERR_TIMEOUT : TB_OP_ERR_SERVER;
        tb_buf_putf(&out->text, "%s%s: %s: %s", out->text.len ? "; " : "", what, how, r.output);
        rc = -1;
    } else if (keep) {
        tb_buf_putf(&out->text, "%s%s: %s", out->text.len ? "; " : "", what, r.output);
    }
    tb_spawn_result_free(&r);
    return rc;
}

static void backup_run(const infra_op_ctx *c, infra_op_out *out) {
    char bb[PATH_MAX], vb[PATH_MAX], target[PATH_MAX], service[PATH_MAX], e[TB_ERR_LEN], **env;
    uint64_t t0 = tb_now_us(), copy_us;
    out->status = TB_OP_OK;
    if (infra_find_pg_program("pg_basebackup", "postgresql-client", bb, sizeof bb, e) != 0 ||
        (c->d->verify && infra_find_pg_program("pg_verifybackup", "postgresql-client", vb, sizeof vb, e) != 0)) {
        out->status = TB_OP_ERR_IO;
        tb_buf_putf(&out->text, "%s", e);
        return;
    }
    snprintf(service, sizeof service, "%s/pg_service.conf", c->dir);
    if (write_service(c->ep->pg_conninfo, service, e) != 0) {
        out->status = TB_OP_ERR_CONNECT;
        tb_buf_putf(&out->text, "%s", e);
        return;
    }
    env = child_env(service);
    snprintf(target, sizeof target, "%s/backup", c->dir);
    const char *argv[] = {bb,       "-D",
                          target,   "-X",
                          "stream", "-c",
                          "fast",   "-w",
                          "-l",     "tilebench infra backup",
                          "-d",     "service=tilebench",
                          NULL};
    int rc = run_tool(c, out, argv, env, "pg_basebackup", c->timeout_us, 0);
    copy_us = tb_now_us() - t0;
    if (rc == 0) {
        out->bytes = infra_tree_bytes(target);
        out->busy_us = copy_us;
        infra_put_secs(&out->text, "pg_basebackup", copy_us);
        tb_buf_putf(&out->text, ", %.1f MB (%.1f MB/s)", (double)out->bytes / 1e6,
                    copy_us ? (double)out->bytes / (double)copy_us : 0.0);
    }
    if (rc == 0 && c->d->verify) {
        const char *vargv[] = {vb, target, NULL};
        uint64_t t1 = tb_now_us();
        if (run_tool(c, out, vargv, NULL, "pg_verifybackup", infra_left_us(t0, c->timeout_us), 1) == 0) {
            if (out->status == TB_OP_OK && out->text.len && out->text.ptr[out->text.len - 1] == '\n')
                out->text.ptr[--out->text.len] = '\0';
            infra_put_secs(&out->text, "verify", tb_now_us() - t1);
        }
        if (out->status == TB_OP_ERR_SERVER) out->status = TB_OP_ERR_CONTENT; /* the backup is not valid */
    }
    (void)infra_remove_tree(target);
    (void)remove(service);
    free_env(env);
}

const infra_kind_vt infra_backup_vt = {
    .kind = TB_INFRA_BACKUP,
    .check = backup_check,
    .level_begin = NULL,
    .run = backup_run,
    .level_end = NULL,
};
