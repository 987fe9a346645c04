/*
 * infra_internal.h: internal to infra/. What each kind of infrastructure
 * operation (deploy.c, backup.c, migrate.c, command.c) gives the runner
 * (infra.c): a check of what it needs, optional per-level state, and one op.
 */
#ifndef TB_INFRA_INFRA_INTERNAL_H
#define TB_INFRA_INFRA_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "common/buf.h"
#include "infra/infra.h"

/* One op, as the runner hands it to its kind. */
typedef struct infra_op_ctx {
    const tb_infra_def *d;
    const tb_sut_endpoints *ep;
    const tb_infra_level *lv;
    const char *dir;             /* this op's own folder (the runner makes it empty and removes it after) */
    int user;                    /* 0-based infrastructure user */
    int tile;                    /* the tile it works on: {tile} */
    uint64_t timeout_us;         /* the op's budget: children are killed past it */
    volatile sig_atomic_t *stop; /* becomes non-zero when tb_infra_stop is called: give up at once */
    void *state;                 /* the kind's per-level state (level_begin), NULL without */
} infra_op_ctx;

/* What one op did. */
typedef struct infra_op_out {
    tb_op_status status; /* TB_OP_OK, or the error class */
    uint64_t bytes;      /* bytes it moved (backup: the backup's size); 0 none */
    uint64_t busy_us;    /* of the op's time, what moving those bytes took (backup: pg_basebackup alone);
                            0: the whole op */
    int exit_code;       /* a command's exit status; -1 none */
    tb_buf text;         /* what it printed or did (the runner inits it with the cap, and owns it) */
} infra_op_out;

typedef struct infra_kind_vt {
    tb_infra_kind kind;
    /* Programs and endpoints it needs (tb_infra_check's contract). 0 or -1 with err. */
    int (*check)(const tb_infra_def *d, const tb_sut_endpoints *ep, char *err);
    /* Optional: state shared by the operation's users over one level (e.g.
     * migrate's tiles moved so far); NULL with err on failure. */
    void *(*level_begin)(const tb_infra_def *d, const tb_sut_endpoints *ep, const tb_infra_level *lv, const char *dir,
                         char *err);
    /* Runs one op to its end (or its timeout, or *stop). Never returns early
     * while a child it started runs; removes what it made under c->dir. */
    void (*run)(const infra_op_ctx *c, infra_op_out *out);
    /* Optional: undoes the level's state (switches migrated tiles back,
     * stops instances) and frees it; on every exit path. */
    void (*level_end)(void *state, const tb_infra_level *lv);
} infra_kind_vt;

extern const infra_kind_vt infra_deploy_vt, infra_backup_vt, infra_migrate_vt, infra_command_vt;

/* ---- helpers the kinds share (infra/util.c) ------------------------------ */

/* rm -rf path (no symlink followed); a missing path is fine. 0 or -1 (errno). */
int infra_remove_tree(const char *path);
/* Bytes in the regular files under path (no symlink followed). */
uint64_t infra_tree_bytes(const char *path);
/* µs left of an op that began at start_us with budget_us; 0 when none is. */
uint64_t infra_left_us(uint64_t start_us, uint64_t budget_us);
/*
 * A PostgreSQL program (initdb, postgres, pg_basebackup, pg_verifybackup):
 * in $TB_PG_BINDIR when set, else in the newest /usr/lib/postgresql/N/bin
 * that holds it, else in the PATH. 0, or -1 with err naming the program, where
 * it looked and the Debian package that holds it (pkg: "postgresql" for the
 * server's programs, "postgresql-client" for the client's; the version of
 * the newest installed PostgreSQL is appended, as Debian names them).
 */
int infra_find_pg_program(const char *name, const char *pkg, char *out, size_t len, char *err);
/* Seconds as "1.4 s" for an op's account. */
void infra_put_secs(tb_buf *b, const char *what, uint64_t us);
/* value as a libpq conninfo value: in single quotes, ' and \ escaped with \
 * (PostgreSQL manual, 34.1.1 "Connection Strings"), so a path with a space
 * or a quote stays one value. 0, or -1 when out (len bytes) is too small. */
int infra_conninfo_quote(const char *value, char *out, size_t len);

#endif
