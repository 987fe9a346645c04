/*
 * backup.c: the backup kind of infrastructure operation, a bulk copy of
 * live storage while the tiles run: pg_basebackup of the SUT's PostgreSQL
 * ([sut] pg) into the op's folder, with the WAL streamed beside it (-X
 * stream) and a fast checkpoint (-c fast), so it starts at once and holds a
 * consistent copy. With verify = yes, pg_verifybackup checks it against its
 * manifest (and its WAL) and its output is kept. The op's bytes are the
 * backup's size; then the runner removes it.
 *
 * The password of [sut] pg never reaches a command line: the conninfo handed
 * to pg_basebackup is rebuilt without it, and the password goes in the
 * child's environment (PGPASSWORD), which other accounts cannot read.
 */
#include <libpq-fe.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spawn.h"
#include "infra/infra_internal.h"

extern char **environ;

static int backup_check(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err) {
    char path[PATH_MAX], e[TB_ERR_LEN];
    if (!ep || !ep->pg_conninfo || !*ep->pg_conninfo) {
        tb_seterr(err, "backup: no PostgreSQL to back up: give [sut] pg (or let run start the embedded SUT)");
        return -1;
    }
    if (infra_find_pg_program("pg_basebackup", "postgresql-client", path, sizeof path, e) != 0 ||
        (d->verify && infra_find_pg_program("pg_verifybackup", "postgresql-client", path, sizeof path, e) != 0)) {
        tb_seterr(err, "backup: %s", e);
        return -1;
    }
    return 0;
}

/* v as a conninfo value: in single quotes, ' and \ escaped. */
static void put_value(tb_buf *b, const char *v) {
    tb_buf_put(b, "'");
    for (; *v; v++) {
        if (*v == '\'' || *v == '\\') tb_buf_put(b, "\\");
        tb_buf_putn(b, v, 1);
    }
    tb_buf_put(b, "'");
}

/* conninfo (key=value or a URI) without its password, which goes to
 * *password (heap, NULL when none). NULL with err when it does not parse. */
static char *strip_password(const char *conninfo, char **password, char *err) {
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    tb_buf b;
    *password = NULL;
    if (!opts) {
        /* libpq's message may quote the conninfo: not shown */
        tb_seterr(err, "[sut] pg: not a valid connection string");
        PQfreemem(perr);
        return NULL;
    }
    tb_buf_init(&b, 0);
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val) continue;
        if (strcmp(o->keyword, "password") == 0) {
            *password = xstrdup(o->val);
            continue;
        }
        tb_buf_putf(&b, "%s%s=", b.len ? " " : "", o->keyword);
        put_value(&b, o->val);
    }
    PQconninfoFree(opts);
    return tb_buf_take(&b, NULL);
}

/* The parent's environment with PGPASSWORD=password instead of any PGPASSWORD
 * of its own; NULL (the parent's, as it is) without a password. The strings
 * are the parent's, but for the last one. */
static char **child_env(const char *password) {
    size_t n = 0, k = 0;
    char **env;
    if (!password) return NULL;
    while (environ[n])
        n++;
    env = xcalloc(n + 2, sizeof *env);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PGPASSWORD=", 11) != 0) env[k++] = environ[i];
    size_t len = strlen(password) + 12;
    env[k] = xmalloc(len);
    snprintf(env[k], len, "PGPASSWORD=%s", password);
    env[k + 1] = NULL;
    return env;
}

static void free_env(char **env) {
    size_t n = 0;
    if (!env) return;
    while (env[n])
        n++;
    if (n) {
        memset(env[n - 1], 0, strlen(env[n - 1]));
        free(env[n - 1]);
    }
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
    char bb[PATH_MAX], vb[PATH_MAX], target[PATH_MAX], e[TB_ERR_LEN], *password = NULL, *ci, **env;
    uint64_t t0 = tb_now_us(), copy_us;
    out->status = TB_OP_OK;
    if (infra_find_pg_program("pg_basebackup", "postgresql-client", bb, sizeof bb, e) != 0 ||
        (c->d->verify && infra_find_pg_program("pg_verifybackup", "postgresql-client", vb, sizeof vb, e) != 0)) {
        out->status = TB_OP_ERR_IO;
        tb_buf_putf(&out->text, "%s", e);
        return;
    }
    if (!(ci = strip_password(c->ep->pg_conninfo, &password, e))) {
        out->status = TB_OP_ERR_CONNECT;
        tb_buf_putf(&out->text, "%s", e);
        return;
    }
    env = child_env(password);
    snprintf(target, sizeof target, "%s/backup", c->dir);
    const char *argv[] = {bb,   "-D", target, "-X", "stream", "-c", "fast", "-w", "-l", "tilebench infra backup",
                          "-d", ci,   NULL};
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
    free_env(env);
    if (password) memset(password, 0, strlen(password));
    free(password);
    free(ci);
}

const infra_kind_vt infra_backup_vt = {
    .kind = TB_INFRA_BACKUP,
    .check = backup_check,
    .level_begin = NULL,
    .run = backup_run,
    .level_end = NULL,
};
