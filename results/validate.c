/*
 * validate.c: `tilebench validate`'s verdict over the results store (see
 * validate.h). One query over levels, one over each failing level's rules.
 */
#include "results/validate.h"
#include "results/store_internal.h"

#include <sqlite3.h>
#include <string.h>

static int fail_db(sqlite3 *db, const char *what, char *err) {
    tb_seterr(err, "validate: %s: %s", what, sqlite3_errmsg(db));
    return -1;
}

/* Prints the QoS rules of one level row that failed or were not judged
 * (too few ops): observed vs limit for a failure, the sample vs the least
 * sample for a rule not judged. */
static int print_rules(sqlite3 *db, int64_t level_id, FILE *f, char *err) {
    sqlite3_stmt *st;
    int rc;
    if (sqlite3_prepare_v2(db,
                           "SELECT rule, observed, \"limit\", reason, tile, judged, ops, min_ops FROM qos"
                           " WHERE level_id = ? AND (pass = 0 OR judged = 0) ORDER BY judged DESC, tile, rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_db(db, "read qos", err);
    sqlite3_bind_int64(st, 1, level_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *rule = (const char *)sqlite3_column_text(st, 0);
        const char *reason = (const char *)sqlite3_column_text(st, 3);
        int tile = sqlite3_column_int(st, 4), judged = sqlite3_column_int(st, 5);
        fputs(judged ? "    QoS FAIL  " : "    QoS NOT JUDGED  ", f);
        if (tile > 0) fprintf(f, "tile %d: ", tile);
        if (judged) {
            fprintf(f, "%s: observed ", rule ? rule : "?");
            /* NULL: nothing observed (no ops), "n/a" rather than an invented 0 */
            if (sqlite3_column_type(st, 1) == SQLITE_NULL) fputs("n/a", f);
            else fprintf(f, "%.3f", sqlite3_column_double(st, 1));
            fprintf(f, ", limit %.3f", sqlite3_column_double(st, 2));
            if (reason && *reason) fprintf(f, " (%s)", reason);
        } else if (reason && *reason && strcmp(reason, "no ops") != 0) {
            fprintf(f, "%s: %s", rule ? rule : "?", reason); /* says the ops and the least it needs */
        } else {
            fprintf(f, "%s: %lld ops, needs %lld", rule ? rule : "?", (long long)sqlite3_column_int64(st, 6),
                    (long long)sqlite3_column_int64(st, 7));
        }
        fputc('\n', f);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return fail_db(db, "read qos", err);
    return 0;
}

int tb_validate_run(tb_store *s, int64_t run_id, int tiles, FILE *f, char *err) {
    sqlite3 *db = tb_store_db(s);
    sqlite3_stmt *st;
    int rc, n = 0, pass = 1;
    char status[32] = "";
    int64_t pid = 0, start = 0;

    if (sqlite3_prepare_v2(db, "SELECT status, writer_pid, writer_start FROM runs WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return fail_db(db, "read run", err);
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *stored = (const char *)sqlite3_column_text(st, 0);
        pid = sqlite3_column_int64(st, 1);
        start = sqlite3_column_int64(st, 2);
        snprintf(status, sizeof status, "%s", tb_store_effective_status(stored ? stored : "", pid, start));
    }
    sqlite3_finalize(st);
    if (!status[0]) {
        tb_seterr(err, "run %lld not found", (long long)run_id);
        return -1;
    }

    if (sqlite3_prepare_v2(db,
                           "SELECT id, tiles, phase, qos_pass, valid, invalid_reason, qos_not_judged FROM levels"
                           " WHERE run_id = ?1 "
                           "AND (?2 = 0 OR tiles = ?2) ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return fail_db(db, "read levels", err);
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, tiles);
    fprintf(f, "run %lld (%s)\n", (long long)run_id, status);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int qos = sqlite3_column_int(st, 3), valid = sqlite3_column_int(st, 4), nj = sqlite3_column_int(st, 6);
        const char *why = (const char *)sqlite3_column_text(st, 5);
        n++;
        fprintf(f, "  %d tiles phase %d: QoS %s", sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
                qos ? "PASS" : "FAIL");
        if (nj > 0) fprintf(f, " (%d rule%s not judged: too few ops)", nj, nj == 1 ? "" : "s");
        fprintf(f, ", %s\n", valid ? "valid" : "INVALID");
        if (!valid) fprintf(f, "    INVALID   %s\n", why && *why ? why : "(no reason stored)");
        if ((!qos || nj > 0) && print_rules(db, id, f, err) != 0) {
            sqlite3_finalize(st);
            return -1;
        }
        /* a rule not judged is not a pass: QoS has not been shown to hold */
        if (!qos || nj > 0 || !valid) pass = 0;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return fail_db(db, "read levels", err);
    if (n == 0 && tiles > 0) {
        tb_seterr(err, "run %lld has no load level with %d tiles", (long long)run_id, tiles);
        return -1;
    }
    if (n == 0) { /* a run that measured nothing cannot pass */
        fprintf(f, "  no load level was measured\nFAIL\n");
        return 0;
    }
    if (tiles == 0 && strcmp(status, TB_RUN_COMPLETE) != 0) {
        fprintf(f, "  run is %s: not every load level was measured\n", status);
        pass = 0;
    }
    fprintf(f, "%s\n", pass ? "PASS" : "FAIL");
    return pass;
}
