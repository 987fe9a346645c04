/*
 * store_writer.c: is a run's writer still alive? A run stored 'running'
 * whose writing process is gone (killed, or stopped by a full disk) reads
 * as 'interrupted', and a writer opening the database marks it so.
 */
#include "results/store.h"
#include "results/store_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <sqlite3.h>

/* Field 22 (starttime) of /proc/PID/stat, and the state letter; -1 when
 * unreadable (no /proc, process gone, another OS). */
int64_t tb_store_proc_starttime(int64_t pid, char *state) {
    char path[64], buf[1024];
    FILE *f;
    size_t n;
    char *p, *save = NULL, *tok;
    int field;
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    f = fopen(path, "r");
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* comm (field 2) may hold spaces and parentheses: fields resume after the last ')' */
    p = strrchr(buf, ')');
    if (!p) return -1;
    for (field = 3, tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
        if (field == 3 && state) *state = tok[0];
        if (field == 22) return strtoll(tok, NULL, 10);
    }
    return -1;
}

const char *tb_store_effective_status(const char *stored, int64_t writer_pid, int64_t writer_start) {
    char state = '?';
    int64_t now_start;
    if (!stored || strcmp(stored, TB_RUN_RUNNING) != 0 || writer_pid <= 0) return stored;
    if (kill((pid_t)writer_pid, 0) != 0 && errno == ESRCH) return TB_RUN_INTERRUPTED;
    now_start = tb_store_proc_starttime(writer_pid, &state);
    if (now_start >= 0) {
        if (state == 'Z' || state == 'X') return TB_RUN_INTERRUPTED;                  /* died, not yet reaped */
        if (writer_start > 0 && now_start != writer_start) return TB_RUN_INTERRUPTED; /* pid reused */
    }
    return stored;
}

/* Writes 'interrupted' over the stored 'running' of every run whose writer is
 * gone (killed, or stopped by a full disk that also refused the final status
 * update), so the file says what readers already show. finished_at stays
 * NULL: when the writer died is not known. Best effort: a database that
 * still cannot be written keeps its rows, which readers still show as
 * interrupted (tb_store_effective_status). */
void tb_store_mark_dead_runs(sqlite3 *db, const char *path) {
    sqlite3_stmt *sel = NULL, *upd = NULL;
    int64_t *dead = NULL;
    size_t n_dead = 0, cap = 0, n = 0;
    /* the dead writers' runs first, then the updates with the read finished */
    if (sqlite3_prepare_v2(db, "SELECT id, writer_pid, writer_start FROM runs WHERE status = 'running'", -1, &sel,
                           NULL) != SQLITE_OK)
        goto out;
    while (sqlite3_step(sel) == SQLITE_ROW) {
        if (sqlite3_column_type(sel, 1) == SQLITE_NULL ||
            strcmp(
                tb_store_effective_status(TB_RUN_RUNNING, sqlite3_column_int64(sel, 1), sqlite3_column_int64(sel, 2)),
                TB_RUN_INTERRUPTED) != 0)
            continue;
        if (n_dead == cap) {
            cap = cap ? 2 * cap : 8;
            dead = xrealloc(dead, cap * sizeof *dead);
        }
        dead[n_dead++] = sqlite3_column_int64(sel, 0);
    }
    sqlite3_finalize(sel);
    sel = NULL;
    if (!n_dead || sqlite3_prepare_v2(db, "UPDATE runs SET status = 'interrupted' WHERE id = ?1 AND status = 'running'",
                                      -1, &upd, NULL) != SQLITE_OK)
        goto out;
    for (n = 0; n < n_dead; n++) {
        sqlite3_bind_int64(upd, 1, dead[n]);
        int rc = sqlite3_step(upd);
        sqlite3_reset(upd);
        if (rc != SQLITE_DONE) {
            tb_log(TB_LOG_WARN, "%s: run %lld's writer is gone, but its status cannot be set to interrupted: %s", path,
                   (long long)dead[n], sqlite3_errmsg(db));
            break;
        }
    }
    if (n) tb_log(TB_LOG_INFO, "%s: %zu run(s) whose writer had died marked interrupted", path, n);
out:
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    free(dead);
}
