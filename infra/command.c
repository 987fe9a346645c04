/*
 * command.c: the command kind of infrastructure operation: a user command
 * run with /bin/sh -c, its placeholders {tile}, {level} and {dir} replaced
 * ({dir} shell-quoted: the op's own empty folder, also the command's working
 * folder), in a process group of its own. Exit status 0 is a success; any
 * other an error (server class) and a timeout a timeout error; its stdout and
 * stderr are kept, capped at output_cap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/spawn.h"
#include "infra/infra_internal.h"

#define COMMAND_GRACE_US 2000000u /* SIGTERM to SIGKILL of a command past its timeout */
#define TRAILER_ROOM     96       /* bytes of the cap kept for the "[exit status 1]" line */

static int command_check(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err) {
    (void)ep;
    if (!d->command) {
        tb_seterr(err, "command: missing");
        return -1;
    }
    if (access("/bin/sh", X_OK) != 0) {
        tb_seterr(err, "command: /bin/sh not found: install the Debian package dash");
        return -1;
    }
    return 0;
}

/* s in single quotes for /bin/sh ('it'\''s'). */
static void put_quoted(tb_buf *b, const char *s) {
    tb_buf_put(b, "'");
    for (; *s; s++)
        if (*s == '\'')
            tb_buf_put(b, "'\\''");
        else
            tb_buf_putn(b, s, 1);
    tb_buf_put(b, "'");
}

/* The command line with its placeholders replaced (heap). */
static char *expand(const infra_op_ctx *c) {
    tb_buf b;
    const char *p = c->d->command;
    tb_buf_init(&b, 0);
    while (*p) {
        if (strncmp(p, "{tile}", 6) == 0) {
            tb_buf_putf(&b, "%d", c->tile);
            p += 6;
        } else if (strncmp(p, "{level}", 7) == 0) {
            tb_buf_putf(&b, "%d", c->lv->level);
            p += 7;
        } else if (strncmp(p, "{dir}", 5) == 0) {
            put_quoted(&b, c->dir);
            p += 5;
        } else {
            tb_buf_putn(&b, p++, 1);
        }
    }
    return tb_buf_take(&b, NULL);
}

static void command_run(const infra_op_ctx *c, infra_op_out *out) {
    char *cmd = expand(c), e[TB_ERR_LEN], how[96];
    size_t cap = out->text.max > 2 * TRAILER_ROOM ? out->text.max - TRAILER_ROOM : out->text.max;
    tb_spawn_opts o;
    tb_spawn_result res;
    memset(&o, 0, sizeof o);
    o.shell = cmd;
    o.dir = c->dir;
    o.output_max = cap;
    o.timeout_us = c->timeout_us ? c->timeout_us : 1;
    o.grace_us = COMMAND_GRACE_US;
    o.new_group = 1;
    o.reap_group = 1; /* a job it left running in its group ends with the op */
    o.stop = c->stop;
    if (tb_spawn_run(&o, &res, e) != 0) {
        out->status = TB_OP_ERR_IO;
        tb_buf_putf(&out->text, "cannot run the command: %s", e);
    } else {
        for (size_t i = 0; i < res.output_len; i++)
            if (res.output[i] == '\0') res.output[i] = '?'; /* kept as text: a NUL would end it */
        tb_buf_putn(&out->text, res.output, res.output_len);
        if (res.timed_out || res.stopped)
            out->status = TB_OP_ERR_TIMEOUT;
        else if (res.exited && res.exit_status == 0)
            out->status = TB_OP_OK;
        else
            out->status = TB_OP_ERR_SERVER;
        out->exit_code = res.exited ? res.exit_status : -1;
        if (out->status != TB_OP_OK || res.output_cut) {
            tb_spawn_describe(&res, &o, how, sizeof how);
            out->text.overflow = 0;
            tb_buf_putf(&out->text, "%s[%s%s]", out->text.len && out->text.ptr[out->text.len - 1] != '\n' ? "\n" : "",
                        out->status == TB_OP_OK ? "exit status 0" : how, res.output_cut ? "; output cut" : "");
        }
    }
    tb_spawn_result_free(&res);
    free(cmd);
}

const infra_kind_vt infra_command_vt = {
    .kind = TB_INFRA_COMMAND,
    .check = command_check,
    .level_begin = NULL,
    .run = command_run,
    .level_end = NULL,
};
