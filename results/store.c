/*
 * store.c: the SQLite results store. The schema lives in an ordered array of
 * migrations keyed on PRAGMA user_version; opening a database applies the
 * missing ones, each in its own transaction (store_migrate.c; a new database
 * gets the schema they build at once). Every write (a run's start, active
 * idle, one phase of a load level, an event, the end of a run) is one
 * BEGIN IMMEDIATE .. COMMIT over cached prepared statements, so a crash, a
 * SIGINT or a full disk never loses or half-writes a completed interval.
 *
 * Conventions of the stored data: wall-clock times are ISO 8601 UTC text,
 * latencies are ms, power is W; a NaN (or "unknown", such as avg_watts -1) is
 * stored as NULL so readers never have to guess at sentinels.
 */
#include "results/store.h"
#include "results/store_internal.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

/* The cached write statements, prepared once after migration. */
enum {
    ST_RUN,
    ST_METER,
    ST_IDLE,
    ST_LEVEL,
    ST_WORKLOAD,
    ST_OP,
    ST_SAMPLE,
    ST_QOS,
    ST_EVENT,
    ST_FINISH,
    ST_CALIB,
    ST_CAMPAIGN,
    ST_CAMPAIGN_END,
    ST_CAMPAIGN_STEP,
    ST_TELEM,
    ST_AGENT,
    ST_STAGE,
    ST_CHANNEL,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    /* uuid: a random version 4 UUID, the expression of migration 10 -> 11 */
    [ST_RUN] = "INSERT INTO runs (label, status, tile_name, tile_spec, started_at, tilebench_version,"
               " host_json, settings_json, config_text, writer_pid, writer_start, campaign_id, campaign_config,"
               " source_revision, uuid)"
               " VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
               " lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||"
               " substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||"
               " substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))",
    [ST_METER] = "INSERT INTO meters (run_id, idx, uri, model, idn, estimated, serial, firmware, driver,"
                 " volt_range_v, amp_range_a, volt_mode, amp_mode, crest_factor, update_ms, avg_window_ms, host,"
                 " calibrated, accuracy, channels)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    [ST_IDLE] = "UPDATE runs SET active_idle_watts = ?2 WHERE id = ?1",
    [ST_LEVEL] =
        "INSERT INTO levels (run_id, tiles, phase, steady_start, steady_end, steady_s, score,"
        " avg_watts, ppkw, qos_pass, valid, invalid_reason, samples_total, samples_bad,"
        " cpu_util_pct, avg_freq_mhz, repeat, user_pct, nice_pct, sys_pct, idle_pct, iowait_pct, irq_pct,"
        " softirq_pct, steal_pct, freq_source, telemetry_samples, cstate_residency_json, qos_not_judged,"
        " steady_start_mono_us, steady_end_mono_us, app_score, infra_score, alone, other_cpu_pct, sut_processes)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
        " ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)",
    [ST_WORKLOAD] = "INSERT INTO workloads (level_id, name, tile, ops, errors, throughput, unit, reference,"
                    " normalized) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_OP] = "INSERT INTO ops (workload_id, name, count, errors, count_all, mean_ms, p50_ms, p90_ms, p95_ms,"
              " p99_ms, p999_ms, max_ms, hist, hist_uncorrected, metric, err_connect, err_io, err_timeout, err_server,"
              " err_content)"
              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    [ST_SAMPLE] = "INSERT INTO power_samples (run_id, level_id, meter_idx, mono_us, wall_us, watts, volts,"
                  " amps, pf, flags, uncertainty_pct, reason, stage)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [ST_QOS] = "INSERT INTO qos (level_id, rule, observed, \"limit\", pass, reason, tile, judged, ops, min_ops)"
               " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [ST_EVENT] = "INSERT INTO events (run_id, at, kind, message) VALUES (?1, ?2, ?3, ?4)",
    [ST_FINISH] = "UPDATE runs SET status = ?2, finished_at = ?3, saturation_tiles = ?4 WHERE id = ?1",
    [ST_CALIB] = "INSERT INTO calibrations (tile_name, def_hash, workload, reference, unit, run_id, created_at)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [ST_CAMPAIGN] = "INSERT INTO campaigns (name, baseline, config_path, config_text, status, started_at,"
                    " writer_pid, writer_start) VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7)",
    [ST_CAMPAIGN_END] = "UPDATE campaigns SET status = ?2, message = ?3, finished_at = ?4 WHERE id = ?1",
    [ST_CAMPAIGN_STEP] = "INSERT INTO campaign_steps (campaign_id, config, step, command, exit_status, output,"
                         " started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_AGENT] = "INSERT INTO level_agents (level_id, name, host, tile_lo, tile_hi, threads, users, ops, errors,"
                 " cpu_s, stall_max_us, stall_p99_us, clock_offset_us, clock_bound_us, lost_at)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    [ST_TELEM] = "INSERT INTO telemetry_samples (run_id, level_id, mono_us, wall_us, interval_us, cpu_util_pct,"
                 " user_pct, nice_pct, sys_pct, idle_pct, iowait_pct, irq_pct, softirq_pct, steal_pct, freq_mhz,"
                 " freq_source, cstate_residency_json)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    [ST_CHANNEL] = "INSERT INTO channel_samples (run_id, level_id, meter_idx, channel, mono_us, stage, watts, volts,"
                   " amps, pf, flags, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [ST_STAGE] = "INSERT INTO stages (run_id, stage, tiles, repeat, phase, alone, start_mono_us, end_mono_us)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
};

struct tb_store {
    sqlite3 *db;
    char *path; /* as given, for messages */
    int readonly;
    char *uri;                  /* read through "file:...?immutable=1" (tb_store_immutable_uri); else NULL */
    sqlite3_stmt *st[ST_COUNT]; /* NULL when read-only */
};

/* ---- small helpers ---------------------------------------------------- */

const char *tb_store_err_class_name(int cls) {
    static const char *const names[TB_ERR_NCLASSES] = {"connect", "io", "timeout", "server", "content"};
    return cls >= 0 && cls < TB_ERR_NCLASSES ? names[cls] : NULL;
}

/* 1 when this process has a file size limit (RLIMIT_FSIZE, `ulimit -f`). */
static int write_limited(void) {
    struct rlimit rl;
    return getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* Fills err with "what: <sqlite message>", adding what a full disk means for
 * the data, because "database or disk is full" alone leaves the user asking
 * whether the run is lost. */
void tb_store_db_err(sqlite3 *db, const char *path, char *err, const char *what) {
    int code = sqlite3_errcode(db);
    const char *msg = sqlite3_errmsg(db);
    if ((code & 0xff) == SQLITE_FULL)
        tb_seterr(err, "%s: %s (no space left for %s; this interval was not written, earlier ones are intact)", what,
                  msg, path);
    else if (sqlite3_extended_errcode(db) == SQLITE_IOERR_WRITE && write_limited())
        /* RLIMIT_FSIZE (ulimit -f): the write failed with EFBIG, which SQLite
         * reports as a plain I/O error (its saved errno is not reliable) */
        tb_seterr(err,
                  "%s: %s (file size limit reached for %s: ulimit -f; this interval was not written, "
                  "earlier ones are intact)",
                  what, msg, path);
    else
        tb_seterr(err, "%s: %s", what, msg);
}

static void set_db_err(tb_store *s, char *err, const char *what) { tb_store_db_err(s->db, s->path, err, what); }

static int exec_sql(tb_store *s, const char *sql) { return sqlite3_exec(s->db, sql, NULL, NULL, NULL); }

/* Rolls back if a transaction is open (SQLite may already have rolled back
 * by itself, e.g. after SQLITE_FULL). The caller saved the error first. */
static void tx_rollback(tb_store *s) {
    if (!sqlite3_get_autocommit(s->db)) (void)exec_sql(s, "ROLLBACK");
}

/* Runs a bound write statement to completion and resets it. SQLITE_OK or the
 * error code (errmsg stays readable until the next call on the handle). */
static int step_done(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* NaN and infinities are not numbers a reader can use: NULL. */
static void bind_real(sqlite3_stmt *st, int i, double v) {
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* Watts where a negative value means "unknown" (the -1 convention). */
static void bind_watts(sqlite3_stmt *st, int i, double w) {
    if (isfinite(w) && w >= 0)
        sqlite3_bind_double(st, i, w);
    else
        sqlite3_bind_null(st, i);
}

/* Text; NULL pointer or "" (when empty_is_null) binds NULL. */
static void bind_text(sqlite3_stmt *st, int i, const char *v, int empty_is_null) {
    if (!v || (empty_is_null && !*v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) {
    sqlite3_bind_int64(st, i, v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* ISO 8601 UTC of a wall-clock µs time; NULL binding when unknown (<= 0). */
static void bind_wall(sqlite3_stmt *st, int i, int64_t wall_us) {
    char buf[32];
    if (wall_us <= 0) {
        sqlite3_bind_null(st, i);
        return;
    }
    tb_format_wall(wall_us, buf, sizeof buf);
    sqlite3_bind_text(st, i, buf, -1, SQLITE_TRANSIENT);
}

/* ---- open, close (the migrations: store_migrate.c) ------------------------ */

/* 0 when this user may write in the folder of path (SQLite keeps a
 * database's journal files beside it), else -1 with err saying so. */
static int check_folder(const char *path, char *err) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    /* not dirname(3): "x/" names the folder x (a file cannot end in '/'), not one in "." */
    if (!slash)
        strcpy(dir, ".");
    else if (n == 0)
        strcpy(dir, "/");
    else if (n < sizeof dir)
        memcpy(dir, path, n), dir[n] = '\0';
    else
        return 0; /* too long to check: SQLite's own error stands */
    if (access(dir, W_OK | X_OK) == 0) return 0;
    tb_seterr(err,
              "open %s: its folder %s: %s (a results database needs a folder this user may write in: SQLite keeps "
              "its journal beside it)",
              path, dir, strerror(errno));
    return -1;
}

/* Common part of both opens: handle, error codes, busy timeout. */
static int open_handle(const char *path, int flags, tb_store **out, char *err) {
    tb_store *s;
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* a device or a FIFO: SQLite would leave its journal beside it (/dev/null-journal) */
        tb_seterr(err, "results database '%s' is %s", path,
                  S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file (a device, FIFO or socket)");
        return -1;
    }
    s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        char what[300];
        snprintf(what, sizeof what, "open %s", path);
        if (s->db)
            set_db_err(s, err, what);
        else
            tb_seterr(err, "open %s: out of memory", path);
        tb_store_close(s);
        return -1;
    }
    sqlite3_extended_result_codes(s->db, 1);
    /* A reader and the coordinator may meet on the lock: wait, don't fail.
     * The writer waits long (a phase just measured must not be lost to
     * another program holding a write lock); readers give up sooner. */
    sqlite3_busy_timeout(s->db, (flags & SQLITE_OPEN_READWRITE) ? 120000 : 5000);
    *out = s;
    return 0;
}

int tb_store_open(const char *path, tb_store **out, char *err) {
    tb_store *s = NULL;
    int version = 0, i;
    char what[300];
    *out = NULL;
    if (!path || !*path) {
        /* SQLite would open a private temporary database: results lost at exit */
        tb_seterr(err, "--db needs a file name (an empty name would keep the results nowhere)");
        return -1;
    }
    if (check_folder(path, err) != 0 || open_handle(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &s, err) != 0)
        return -1;
    snprintf(what, sizeof what, "open %s", path);
    /* Refuse a newer schema before changing anything in the file. */
    if (tb_store_read_version(s->db, &version) != SQLITE_OK) {
        set_db_err(s, err, what);
        goto fail;
    }
    if (tb_store_check_version(s->path, version, err) != 0) goto fail;
    /* a new file, or another program's database: never add our tables to
     * the latter, nor turn it to WAL (below) */
    if (tb_store_check_ours(s->db, path, version, err) != 0) goto fail;
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        tb_seterr(err, "open %s: this user may not write it (a results database must be writable)", path);
        goto fail;
    }
    {
        /* WAL lets report/serve read while a run writes; NORMAL is durable
         * per transaction in WAL except on power loss, which a benchmark
         * interval survives as "interrupted" anyway. */
        sqlite3_stmt *st = NULL;
        int wal = 0;
        if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *mode = sqlite3_column_text(st, 0);
            wal = mode && strcmp((const char *)mode, "wal") == 0;
        }
        sqlite3_finalize(st);
        if (!wal)
            tb_log(TB_LOG_WARN, "%s: journal_mode=WAL not available here; readers will block while a run writes", path);
    }
    if (exec_sql(s, "PRAGMA synchronous=NORMAL") != SQLITE_OK || exec_sql(s, "PRAGMA foreign_keys=ON") != SQLITE_OK) {
        set_db_err(s, err, what);
        goto fail;
    }
    if (version < TB_STORE_SCHEMA_VERSION && tb_store_migrate(s->db, s->path, version, err) != 0) goto fail;
    for (i = 0; i < ST_COUNT; i++) {
        if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
            snprintf(what, sizeof what, "open %s: prepare", path);
            set_db_err(s, err, what);
            goto fail;
        }
    }
    tb_store_mark_dead_runs(s->db, s->path);
    *out = s;
    return 0;
fail:
    tb_store_close(s);
    return -1;
}

/* "file:" URI of path with immutable=1: '%', '?' and '#' percent-encoded. */
static char *immutable_uri(const char *path) {
    size_t n = strlen(path), k = 0;
    char *u = xmalloc(3 * n + 32);
    k += (size_t)sprintf(u, "file:%s", path[0] == '/' ? "" : "./");
    for (const char *c = path; *c; c++)
        k += (size_t)(strchr("%?#", *c) ? sprintf(u + k, "%%%02X", (unsigned char)*c) : sprintf(u + k, "%c", *c));
    strcpy(u + k, "?immutable=1");
    return u;
}

/* A WAL database that cannot be written, in a folder where its -shm cannot
 * be made (a read-only mount, mode 0444 in a 0555 folder): SQLite cannot
 * open it read-only; as immutable it reads the file alone. That is all of
 * the data only when no -wal file holds transactions not yet checkpointed
 * into it: then refuse, never show a part. */
static int reopen_immutable(tb_store **sp, char *err) {
    tb_store *s = *sp;
    char *wal = xmalloc(strlen(s->path) + 8);
    struct stat sb;
    int pending;
    sprintf(wal, "%s-wal", s->path);
    pending = stat(wal, &sb) == 0 && sb.st_size > 0;
    if (pending)
        tb_seterr(err,
                  "open %s: it cannot be written and %s holds transactions not yet in it; copy both files to a "
                  "folder that can be written and read them there",
                  s->path, wal);
    free(wal);
    sqlite3_close(s->db);
    s->db = NULL;
    if (!pending) {
        s->uri = immutable_uri(s->path);
        if (sqlite3_open_v2(s->uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK) {
            sqlite3_extended_result_codes(s->db, 1);
            return 0;
        }
        tb_seterr(err, "open %s (immutable): %s", s->path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
    }
    tb_store_close(s);
    *sp = NULL;
    return -1;
}

const char *tb_store_immutable_uri(const tb_store *s) { return s->uri; }

int tb_store_open_readonly(const char *path, tb_store **out, char *err) {
    tb_store *s = NULL;
    struct stat sb;
    int version = 0, rc;
    *out = NULL;
    /* sqlite3 says only "unable to open database file"; say which and why. */
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT)
            tb_seterr(err, "results database '%s' not found", path);
        else
            tb_seterr(err, "results database '%s': %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(sb.st_mode)) {
        tb_seterr(err, "results database '%s' is a directory", path);
        return -1;
    }
    /* A read-only connection cannot delete the -wal and -shm files it
     * makes when it closes; so when the file is writable, the handle is a
     * read-write one that refuses to write (PRAGMA query_only): the last
     * connection to close then checkpoints and removes them, as the writer's
     * does. The writer waits on the lock as it does for any reader. */
    if (access(path, W_OK) == 0) {
        if (open_handle(path, SQLITE_OPEN_READWRITE, &s, err) != 0) return -1;
        sqlite3_busy_timeout(s->db, 5000); /* a reader's wait, not the writer's */
        if (sqlite3_exec(s->db, "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK) {
            tb_store_close(s);
            s = NULL;
        }
    }
    if (!s && open_handle(path, SQLITE_OPEN_READONLY, &s, err) != 0) return -1;
    s->readonly = 1;
    /* once: a locked file makes each read wait out the busy timeout */
    rc = tb_store_read_version(s->db, &version);
    if ((rc & 0xff) == SQLITE_CANTOPEN) {
        if (reopen_immutable(&s, err) != 0) return -1;
        rc = tb_store_read_version(s->db, &version);
    }
    if (rc != SQLITE_OK) {
        char what[300];
        snprintf(what, sizeof what, "open %s", path);
        set_db_err(s, err, what);
        goto fail;
    }
    if (tb_store_check_version(s->path, version, err) != 0) goto fail;
    if (version == 0) {
        tb_seterr(err, "'%s' is not a tilebench results database (schema version 0)", path);
        goto fail;
    }
    if (version < TB_STORE_SCHEMA_VERSION) {
        tb_seterr(err,
                  "open %s: schema version %d is older than this tilebench reads (%d); "
                  "open it once for writing (e.g. tilebench run --db %s) to migrate it",
                  path, version, TB_STORE_SCHEMA_VERSION, path);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    tb_store_close(s);
    return -1;
}

void tb_store_close(tb_store *s) {
    int i;
    if (!s) return;
    for (i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    free(s->path);
    free(s->uri);
    free(s);
}

struct sqlite3 *tb_store_db(tb_store *s) {
    return s->db;
}

/* ---- writes -------------------------------------------------------------- */

static int check_writable(tb_store *s, const char *what, char *err) {
    if (s->readonly) {
        tb_seterr(err, "%s: %s was opened read-only", what, s->path);
        return -1;
    }
    return 0;
}

/* Starts a write transaction; on failure fills err. */
static int tx_begin(tb_store *s, const char *what, char *err) {
    if (check_writable(s, what, err) != 0) return -1;
    if (exec_sql(s, "BEGIN IMMEDIATE") != SQLITE_OK) {
        set_db_err(s, err, what);
        return -1;
    }
    return 0;
}

/* Commits; on failure records the error, then rolls back. */
static int tx_commit(tb_store *s, const char *what, char *err) {
    if (exec_sql(s, "COMMIT") != SQLITE_OK) {
        set_db_err(s, err, what);
        tx_rollback(s);
        return -1;
    }
    return 0;
}

/* Records the current error, then rolls back: the message must be taken
 * before ROLLBACK replaces it. Always returns -1. */
static int tx_fail(tb_store *s, const char *what, char *err) {
    set_db_err(s, err, what);
    tx_rollback(s);
    return -1;
}

/* meters.channels: "1,2" for a meter read as channels; NULL for one input. */
static void bind_channels(sqlite3_stmt *st, int i, const tb_meter_info *m) {
    char text[3 * TB_METER_MAX_CHANNELS + 1] = "";
    size_t used = 0;
    if (m->nchannels <= 0) {
        sqlite3_bind_null(st, i);
        return;
    }
    for (int k = 0; k < m->nchannels && k < TB_METER_MAX_CHANNELS; k++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", k ? "," : "", m->channel[k] % 10);
    sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
}

/* The channel rows of one sample (channel_samples), beside its power_samples row. */
static int insert_channels(tb_store *s, int64_t run_id, int64_t level_id, const char *stage, const tb_poll_sample *p) {
    sqlite3_stmt *st = s->st[ST_CHANNEL];
    int rc;
    for (int k = 0; k < p->s.nch && k < TB_METER_MAX_CHANNELS; k++) {
        const tb_channel_sample *c = &p->s.ch[k];
        sqlite3_bind_int64(st, 1, run_id);
        if (level_id > 0)
            sqlite3_bind_int64(st, 2, level_id);
        else
            sqlite3_bind_null(st, 2);
        sqlite3_bind_int(st, 3, p->meter);
        sqlite3_bind_int(st, 4, c->channel);
        bind_u64(st, 5, p->s.mono_us);
        sqlite3_bind_text(st, 6, stage, -1, SQLITE_STATIC);
        bind_real(st, 7, c->watts);
        bind_real(st, 8, c->volts);
        bind_real(st, 9, c->amps);
        bind_real(st, 10, c->pf);
        sqlite3_bind_int64(st, 11, (int64_t)c->flags);
        if (c->reason != TB_REASON_NONE)
            sqlite3_bind_text(st, 12, tb_meter_reason_text(c->reason), -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 12);
        if ((rc = step_done(st)) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* Inserts samples of stage ("idle", "steady", ...; power_samples.stage);
 * level_id <= 0 stores NULL (active idle and the ramps). */
static int insert_samples(tb_store *s, int64_t run_id, int64_t level_id, const char *stage,
                          const tb_poll_sample *samples, int n) {
    sqlite3_stmt *st = s->st[ST_SAMPLE];
    int i, rc;
    for (i = 0; i < n; i++) {
        const tb_sample *x = &samples[i].s;
        sqlite3_bind_int64(st, 1, run_id);
        if (level_id > 0)
            sqlite3_bind_int64(st, 2, level_id);
        else
            sqlite3_bind_null(st, 2);
        sqlite3_bind_int(st, 3, samples[i].meter);
        bind_u64(st, 4, x->mono_us);
        sqlite3_bind_int64(st, 5, x->wall_us);
        bind_real(st, 6, x->watts);
        bind_real(st, 7, x->volts);
        bind_real(st, 8, x->amps);
        bind_real(st, 9, x->pf);
        sqlite3_bind_int64(st, 10, (int64_t)x->flags);
        bind_real(st, 11, x->uncertainty_pct);
        if (x->reason != TB_REASON_NONE)
            sqlite3_bind_text(st, 12, tb_meter_reason_text(x->reason), -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 12);
        sqlite3_bind_text(st, 13, stage, -1, SQLITE_STATIC);
        if ((rc = step_done(st)) != SQLITE_OK) return rc;
        if (x->nch > 0 && (rc = insert_channels(s, run_id, level_id, stage, &samples[i])) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* C-state residency as a JSON object text {"C0": 12.5, "C1": 80, ...} in
 * the host's order; NULL when there is none (not available). */
static void bind_cstates(sqlite3_stmt *st, int i, int n, const char (*names)[TB_TELEM_NAME_LEN], const double *pct) {
    json_t *o;
    char *text;
    int k, any = 0;
    if (n <= 0) {
        sqlite3_bind_null(st, i);
        return;
    }
    o = json_object();
    for (k = 0; k < n; k++) {
        if (!isfinite(pct[k])) continue;
        json_object_set_new(o, names[k], json_real(pct[k]));
        any = 1;
    }
    text = any ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(o);
    if (text)
        sqlite3_bind_text(st, i, text, -1, free);
    else
        sqlite3_bind_null(st, i);
}

/* Inserts telemetry samples (level_id <= 0: active idle, NULL). */
static int insert_telemetry(tb_store *s, int64_t run_id, int64_t level_id, const tb_telem_sample *x, int n) {
    sqlite3_stmt *st = s->st[ST_TELEM];
    int i, m, rc;
    for (i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, run_id);
        if (level_id > 0)
            sqlite3_bind_int64(st, 2, level_id);
        else
            sqlite3_bind_null(st, 2);
        bind_u64(st, 3, x[i].mono_us);
        sqlite3_bind_int64(st, 4, x[i].wall_us);
        bind_u64(st, 5, x[i].interval_us);
        bind_real(st, 6, x[i].cpu_util_pct);
        for (m = 0; m < TB_CPU_NMODES; m++)
            bind_real(st, 7 + m, x[i].mode_pct[m]);
        bind_real(st, 15, x[i].freq_mhz);
        bind_text(st, 16, isfinite(x[i].freq_mhz) ? tb_telem_freq_source_name(x[i].freq_src) : NULL, 1);
        bind_cstates(st, 17, x[i].n_cstates, x[i].cstate_name, x[i].cstate_pct);
        if ((rc = step_done(st)) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static const char *range_mode(int mode) {
    return mode == TB_RANGE_AUTO ? "auto" : mode == TB_RANGE_FIXED ? "fixed" : "";
}

int tb_store_begin_run(tb_store *s, const tb_run_info *info, int64_t *run_id, char *err) {
    const char *what = "store begin run";
    sqlite3_stmt *st;
    int64_t id, started = info->started_wall_us > 0 ? info->started_wall_us : tb_wall_us();
    int64_t start_ticks = tb_store_proc_starttime((int64_t)getpid(), NULL);
    int i;
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_RUN];
    bind_text(st, 1, info->label ? info->label : "", 0);
    bind_text(st, 2, info->tile_name, 0);
    bind_text(st, 3, info->tile_spec, 0);
    bind_wall(st, 4, started);
    bind_text(st, 5, TB_VERSION, 0);
    bind_text(st, 6, info->host_json, 1);
    bind_text(st, 7, info->settings_json, 1);
    bind_text(st, 8, info->config_text, 0);
    sqlite3_bind_int64(st, 9, (int64_t)getpid());
    if (start_ticks > 0)
        sqlite3_bind_int64(st, 10, start_ticks);
    else
        sqlite3_bind_null(st, 10);
    if (info->campaign_id > 0)
        sqlite3_bind_int64(st, 11, info->campaign_id);
    else
        sqlite3_bind_null(st, 11);
    bind_text(st, 12, info->campaign_id > 0 ? info->campaign_config : NULL, 1);
    bind_text(st, 13, TB_SOURCE_REVISION, 0);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    id = sqlite3_last_insert_rowid(s->db);
    st = s->st[ST_METER];
    for (i = 0; i < info->n_meters; i++) {
        const tb_meter_info *m = &info->meters[i];
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int(st, 2, i);
        bind_text(st, 3, m->uri, 0);
        bind_text(st, 4, m->model, 1);
        bind_text(st, 5, m->idn, 1);
        sqlite3_bind_int(st, 6, m->estimated ? 1 : 0);
        bind_text(st, 7, m->serial, 1);
        bind_text(st, 8, m->firmware, 1);
        bind_text(st, 9, m->driver, 1);
        /* 0 means "the meter did not say": stored as NULL, never as a reading */
        if (m->volt_range_v > 0)
            sqlite3_bind_double(st, 10, m->volt_range_v);
        else
            sqlite3_bind_null(st, 10);
        if (m->amp_range_a > 0)
            sqlite3_bind_double(st, 11, m->amp_range_a);
        else
            sqlite3_bind_null(st, 11);
        bind_text(st, 12, range_mode(m->volt_mode), 1);
        bind_text(st, 13, range_mode(m->amp_mode), 1);
        if (m->crest_factor > 0)
            sqlite3_bind_double(st, 14, m->crest_factor);
        else
            sqlite3_bind_null(st, 14);
        if (m->update_ms > 0)
            sqlite3_bind_int64(st, 15, m->update_ms);
        else
            sqlite3_bind_null(st, 15);
        if (m->avg_window_ms > 0)
            sqlite3_bind_int64(st, 16, m->avg_window_ms);
        else
            sqlite3_bind_null(st, 16);
        bind_text(st, 17, info->n_hosts && info->meter_hosts ? info->meter_hosts[i] : NULL, 1);
        bind_text(st, 18, m->calibrated, 1);
        bind_text(st, 19, m->accuracy, 1);
        bind_channels(st, 20, m);
        if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    }
    if (tb_store_insert_hosts(s, id, info) != SQLITE_OK) return tx_fail(s, what, err);
    if (tx_commit(s, what, err) != 0) return -1;
    *run_id = id;
    return 0;
}

int tb_store_put_idle(tb_store *s, int64_t run_id, double watts, const tb_poll_sample *samples, int n, char *err) {
    char what[64];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store put active idle of run %lld", (long long)run_id);
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_IDLE];
    sqlite3_bind_int64(st, 1, run_id);
    bind_watts(st, 2, watts);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    if (sqlite3_changes(s->db) != 1) {
        tx_rollback(s);
        tb_seterr(err, "%s: run %lld not found in %s", what, (long long)run_id, s->path);
        return -1;
    }
    if (insert_samples(s, run_id, 0, "idle", samples, n) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

/* Latency columns of one op: mean, p50, p90, p95, p99, p99.9, max in ms from
 * the corrected histogram; NULL when nothing was counted. */
static void bind_latency(sqlite3_stmt *st, int first, const tb_op_result *op) {
    static const double pcts[] = {50, 90, 95, 99, 99.9};
    const tb_hist *h = op->hist;
    size_t i;
    if (op->count == 0 || !h || tb_hist_count(h) == 0) {
        for (i = 0; i < 7; i++)
            sqlite3_bind_null(st, first + (int)i);
        return;
    }
    sqlite3_bind_double(st, first, tb_hist_mean(h) / 1000.0);
    for (i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        sqlite3_bind_double(st, first + 1 + (int)i, (double)tb_hist_percentile(h, pcts[i]) / 1000.0);
    sqlite3_bind_double(st, first + 6, (double)tb_hist_max(h) / 1000.0);
}

/* Binds a histogram as a BLOB (NULL when absent). The encoded buffer is
 * handed to SQLite, which frees it. */
static void bind_hist(sqlite3_stmt *st, int i, const tb_hist *h) {
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!h || tb_hist_encode(h, &buf, &len) != 0 || !buf) {
        free(buf);
        sqlite3_bind_null(st, i);
        return;
    }
    sqlite3_bind_blob64(st, i, buf, len, free);
}

static int insert_workload(tb_store *s, int64_t level_id, const tb_workload_result *w) {
    sqlite3_stmt *st = s->st[ST_WORKLOAD];
    int64_t wid;
    int i, rc;
    sqlite3_bind_int64(st, 1, level_id);
    bind_text(st, 2, w->name, 0);
    sqlite3_bind_int(st, 3, w->tile);
    bind_u64(st, 4, w->ops);
    bind_u64(st, 5, w->errors);
    bind_real(st, 6, w->throughput);
    bind_text(st, 7, w->unit, 1);
    bind_real(st, 8, w->reference);
    bind_real(st, 9, w->normalized);
    if ((rc = step_done(st)) != SQLITE_OK) return rc;
    wid = sqlite3_last_insert_rowid(s->db);
    st = s->st[ST_OP];
    for (i = 0; i < w->n_ops; i++) {
        const tb_op_result *op = &w->op_results[i];
        sqlite3_bind_int64(st, 1, wid);
        bind_text(st, 2, op->name, 0);
        bind_u64(st, 3, op->count);
        bind_u64(st, 4, op->errors);
        bind_u64(st, 5, op->count_all);
        bind_latency(st, 6, op);
        bind_hist(st, 13, op->hist);
        bind_hist(st, 14, op->hist_uncorrected);
        sqlite3_bind_int(st, 15, op->metric ? 1 : 0);
        for (int k = 0; k < TB_ERR_NCLASSES; k++)
            bind_u64(st, 16 + k, op->errors_by_class[k]);
        if ((rc = step_done(st)) != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int insert_agents(tb_store *s, int64_t level_id, const tb_agent_result *a, int n) {
    sqlite3_stmt *st = s->st[ST_AGENT];
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, level_id);
        bind_text(st, 2, a[i].name, 0);
        bind_text(st, 3, a[i].host, 1);
        if (a[i].tile_lo > 0) {
            sqlite3_bind_int(st, 4, a[i].tile_lo);
            sqlite3_bind_int(st, 5, a[i].tile_hi);
        } else {
            sqlite3_bind_null(st, 4);
            sqlite3_bind_null(st, 5);
        }
        sqlite3_bind_int(st, 6, a[i].threads);
        sqlite3_bind_int(st, 7, a[i].users);
        bind_u64(st, 8, a[i].ops);
        bind_u64(st, 9, a[i].errors);
        bind_real(st, 10, a[i].cpu_s);
        bind_u64(st, 11, a[i].stall_max_us);
        bind_u64(st, 12, a[i].stall_p99_us);
        if (a[i].clock_known) {
            sqlite3_bind_int64(st, 13, a[i].clock_offset_us);
            bind_u64(st, 14, a[i].clock_bound_us);
        } else {
            sqlite3_bind_null(st, 13);
            sqlite3_bind_null(st, 14);
        }
        if (a[i].lost_wall_us)
            bind_wall(st, 15, a[i].lost_wall_us);
        else
            sqlite3_bind_null(st, 15);
        if (step_done(st) != SQLITE_OK) return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

int tb_store_put_level(tb_store *s, int64_t run_id, const tb_level_result *lr, char *err) {
    char what[64];
    sqlite3_stmt *st;
    int64_t level_id;
    int i, watts_known = isfinite(lr->avg_watts) && lr->avg_watts >= 0;
    snprintf(what, sizeof what, "store put level %d phase %d", lr->tiles, lr->phase);
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_LEVEL];
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, lr->tiles);
    sqlite3_bind_int(st, 3, lr->phase);
    bind_wall(st, 4, lr->steady_start_wall_us);
    bind_wall(st, 5, lr->steady_end_wall_us);
    sqlite3_bind_double(st, 6, (double)lr->steady_us / 1e6);
    bind_real(st, 7, lr->score);
    bind_watts(st, 8, lr->avg_watts);
    /* Without a power figure a PPKW (0 from tb_score_ppkw) would be a lie. */
    if (watts_known)
        bind_real(st, 9, lr->ppkw);
    else
        sqlite3_bind_null(st, 9);
    sqlite3_bind_int(st, 10, lr->qos_pass ? 1 : 0);
    sqlite3_bind_int(st, 11, lr->valid ? 1 : 0);
    bind_text(st, 12, lr->invalid_reason, 1);
    bind_u64(st, 13, lr->samples_total);
    bind_u64(st, 14, lr->samples_bad);
    bind_real(st, 15, lr->telemetry.cpu_util_pct);
    bind_real(st, 16, lr->telemetry.avg_freq_mhz);
    sqlite3_bind_int(st, 17, lr->repeat > 0 ? lr->repeat : 1);
    {
        const tb_telemetry *t = &lr->telemetry;
        int have = isfinite(t->cpu_util_pct); /* the mode split exists only beside a utilization */
        for (i = 0; i < TB_CPU_NMODES; i++)
            bind_real(st, 18 + i, have ? t->mode_pct[i] : NAN);
        bind_text(st, 26,
                  t->freq_src != TB_FREQ_NONE && isfinite(t->avg_freq_mhz) ? tb_telem_freq_source_name(t->freq_src)
                                                                           : NULL,
                  1);
        sqlite3_bind_int(st, 27, lr->n_telem_samples);
        bind_cstates(st, 28, t->n_cstates, t->cstate_name, t->cstate_pct);
    }
    sqlite3_bind_int(st, 29, lr->qos_not_judged > 0 ? lr->qos_not_judged : 0);
    if (lr->steady_end_mono_us > lr->steady_start_mono_us) {
        bind_u64(st, 30, lr->steady_start_mono_us);
        bind_u64(st, 31, lr->steady_end_mono_us);
    } else {
        sqlite3_bind_null(st, 30);
        sqlite3_bind_null(st, 31);
    }
    /* without infrastructure operations the final score is the application score */
    bind_real(st, 32, lr->has_infra ? lr->app_score : lr->score);
    bind_real(st, 33, lr->has_infra ? lr->infra_score : NAN);
    bind_text(st, 34, lr->alone, 1);
    bind_real(st, 35, lr->other_cpu_pct);
    if (isfinite(lr->other_cpu_pct))
        sqlite3_bind_int(st, 36, lr->sut_processes);
    else
        sqlite3_bind_null(st, 36);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    level_id = sqlite3_last_insert_rowid(s->db);
    for (i = 0; i < lr->n_workloads; i++)
        if (insert_workload(s, level_id, &lr->workloads[i]) != SQLITE_OK) return tx_fail(s, what, err);
    st = s->st[ST_QOS];
    for (i = 0; i < lr->n_qos; i++) {
        const tb_qos_result *q = &lr->qos[i];
        sqlite3_bind_int64(st, 1, level_id);
        bind_text(st, 2, q->rule, 0);
        bind_real(st, 3, q->observed);
        bind_real(st, 4, q->limit);
        sqlite3_bind_int(st, 5, q->pass && !q->not_judged ? 1 : 0); /* a rule not judged never passes */
        bind_text(st, 6, q->reason, 1);
        sqlite3_bind_int(st, 7, q->tile);
        sqlite3_bind_int(st, 8, q->not_judged ? 0 : 1);
        bind_u64(st, 9, q->ops);
        bind_u64(st, 10, q->min_ops);
        if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    }
    if (insert_samples(s, run_id, level_id, "steady", lr->samples, lr->n_samples) != SQLITE_OK)
        return tx_fail(s, what, err);
    for (i = 0; i < lr->n_stage_samples; i++) {
        const tb_stage_samples *ss = &lr->stage_samples[i];
        if (insert_samples(s, run_id, 0, ss->stage, ss->samples, ss->n) != SQLITE_OK) return tx_fail(s, what, err);
    }
    if (insert_telemetry(s, run_id, level_id, lr->telem_samples, lr->n_telem_samples) != SQLITE_OK)
        return tx_fail(s, what, err);
    if (insert_agents(s, level_id, lr->agents, lr->n_agents) != SQLITE_OK) return tx_fail(s, what, err);
    if (tb_store_insert_level_hosts(s, level_id, lr->hosts, lr->n_hosts) != SQLITE_OK) return tx_fail(s, what, err);
    if (tb_store_insert_level_infra(s, level_id, lr) != SQLITE_OK) return tx_fail(s, what, err);
    if (tb_store_insert_level_temperature(s, run_id, level_id, lr) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_put_idle_telemetry(tb_store *s, int64_t run_id, const tb_telem_sample *samples, int n, char *err) {
    const char *what = "store active idle telemetry";
    if (n <= 0) return 0;
    if (tx_begin(s, what, err) != 0) return -1;
    if (insert_telemetry(s, run_id, 0, samples, n) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_put_stage(tb_store *s, int64_t run_id, const tb_stage_row *row, char *err) {
    char what[96];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store stage %s of %d tiles", row->stage ? row->stage : "?", row->tiles);
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_STAGE];
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, row->stage, 0);
    sqlite3_bind_int(st, 3, row->tiles);
    sqlite3_bind_int(st, 4, row->repeat);
    sqlite3_bind_int(st, 5, row->phase);
    bind_text(st, 6, row->alone, 1);
    bind_u64(st, 7, row->start_us);
    bind_u64(st, 8, row->end_us);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_event(tb_store *s, int64_t run_id, const char *kind, const char *message, char *err) {
    const char *what = "store event";
    sqlite3_stmt *st;
    if (!kind || (strcmp(kind, "info") != 0 && strcmp(kind, "warning") != 0 && strcmp(kind, "error") != 0)) {
        tb_seterr(err, "%s: kind '%s' is not info, warning or error", what, kind ? kind : "(null)");
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_EVENT];
    sqlite3_bind_int64(st, 1, run_id);
    bind_wall(st, 2, tb_wall_us());
    bind_text(st, 3, kind, 0);
    bind_text(st, 4, message ? message : "", 0);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_finish_run(tb_store *s, int64_t run_id, const char *status, int saturation_tiles, char *err) {
    char what[64];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store finish run %lld", (long long)run_id);
    if (!status || (strcmp(status, TB_RUN_RUNNING) != 0 && strcmp(status, TB_RUN_COMPLETE) != 0 &&
                    strcmp(status, TB_RUN_INTERRUPTED) != 0 && strcmp(status, TB_RUN_ABORTED) != 0)) {
        tb_seterr(err, "%s: unknown status '%s'", what, status ? status : "(null)");
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_FINISH];
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, status, 0);
    bind_wall(st, 3, tb_wall_us());
    if (saturation_tiles >= 0)
        sqlite3_bind_int(st, 4, saturation_tiles);
    else
        sqlite3_bind_null(st, 4);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    if (sqlite3_changes(s->db) != 1) {
        tx_rollback(s);
        tb_seterr(err, "%s: run %lld not found in %s", what, (long long)run_id, s->path);
        return -1;
    }
    return tx_commit(s, what, err);
}

int tb_store_put_calibration(tb_store *s, int64_t run_id, const char *tile_name, const char *def_hash,
                             const char *workload, double reference, const char *unit, char *err) {
    char what[96];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store calibration of %s", workload);
    if (!(reference > 0) || !isfinite(reference)) {
        tb_seterr(err, "%s: reference %g is not a positive throughput", what, reference);
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_CALIB];
    bind_text(st, 1, tile_name, 0);
    bind_text(st, 2, def_hash, 0);
    bind_text(st, 3, workload, 0);
    sqlite3_bind_double(st, 4, reference);
    bind_text(st, 5, unit, 0);
    sqlite3_bind_int64(st, 6, run_id);
    bind_wall(st, 7, tb_wall_us());
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_get_calibration(tb_store *s, const char *tile_name, const char *def_hash, const char *workload,
                             double *reference, int64_t *run_id, char *created_at, char *err) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT reference, run_id, created_at FROM calibrations WHERE tile_name = ?1 AND"
                                " def_hash = ?2 AND workload = ?3 ORDER BY id DESC LIMIT 1",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        tb_seterr(err, "read calibration: %s", sqlite3_errmsg(s->db));
        return -1;
    }
    sqlite3_bind_text(st, 1, tile_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, def_hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, workload, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *at = (const char *)sqlite3_column_text(st, 2);
        *reference = sqlite3_column_double(st, 0);
        *run_id = sqlite3_column_int64(st, 1);
        snprintf(created_at, 32, "%s", at ? at : "");
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return 1;
    tb_seterr(err, "read calibration: %s", sqlite3_errmsg(s->db));
    return -1;
}

/* ---- campaigns ---------------------------------------------------------------- */

int tb_store_begin_campaign(tb_store *s, const tb_campaign_info *info, int64_t *campaign_id, char *err) {
    const char *what = "store begin campaign";
    sqlite3_stmt *st;
    int64_t start_ticks = tb_store_proc_starttime((int64_t)getpid(), NULL);
    if (!info->name || !*info->name || !info->baseline || !*info->baseline) {
        tb_seterr(err, "%s: a campaign needs a name and a baseline configuration", what);
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_CAMPAIGN];
    bind_text(st, 1, info->name, 0);
    bind_text(st, 2, info->baseline, 0);
    bind_text(st, 3, info->config_path, 1);
    bind_text(st, 4, info->config_text, 1);
    bind_wall(st, 5, tb_wall_us());
    sqlite3_bind_int64(st, 6, (int64_t)getpid());
    if (start_ticks > 0)
        sqlite3_bind_int64(st, 7, start_ticks);
    else
        sqlite3_bind_null(st, 7);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    *campaign_id = sqlite3_last_insert_rowid(s->db);
    return tx_commit(s, what, err);
}

int tb_store_campaign_step(tb_store *s, int64_t campaign_id, const char *config, const char *step, const char *command,
                           int exit_status, const char *output, int64_t started_wall_us, int64_t finished_wall_us,
                           char *err) {
    char what[128];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store campaign %s of %s", step ? step : "(null)", config ? config : "(null)");
    if (!step || (strcmp(step, "apply") != 0 && strcmp(step, "revert") != 0)) {
        tb_seterr(err, "%s: step is not apply or revert", what);
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_CAMPAIGN_STEP];
    sqlite3_bind_int64(st, 1, campaign_id);
    bind_text(st, 2, config ? config : "", 0);
    bind_text(st, 3, step, 0);
    bind_text(st, 4, command ? command : "", 0);
    if (exit_status >= 0)
        sqlite3_bind_int(st, 5, exit_status);
    else
        sqlite3_bind_null(st, 5);
    bind_text(st, 6, output, 1);
    bind_wall(st, 7, started_wall_us > 0 ? started_wall_us : tb_wall_us());
    bind_wall(st, 8, finished_wall_us);
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    return tx_commit(s, what, err);
}

int tb_store_finish_campaign(tb_store *s, int64_t campaign_id, const char *status, const char *message, char *err) {
    char what[64];
    sqlite3_stmt *st;
    snprintf(what, sizeof what, "store finish campaign %lld", (long long)campaign_id);
    if (!status || (strcmp(status, TB_RUN_COMPLETE) != 0 && strcmp(status, TB_RUN_INTERRUPTED) != 0 &&
                    strcmp(status, TB_RUN_ABORTED) != 0)) {
        tb_seterr(err, "%s: unknown status '%s'", what, status ? status : "(null)");
        return -1;
    }
    if (tx_begin(s, what, err) != 0) return -1;
    st = s->st[ST_CAMPAIGN_END];
    sqlite3_bind_int64(st, 1, campaign_id);
    bind_text(st, 2, status, 0);
    bind_text(st, 3, message, 1);
    bind_wall(st, 4, tb_wall_us());
    if (step_done(st) != SQLITE_OK) return tx_fail(s, what, err);
    if (sqlite3_changes(s->db) != 1) {
        tx_rollback(s);
        tb_seterr(err, "%s: campaign %lld not found in %s", what, (long long)campaign_id, s->path);
        return -1;
    }
    return tx_commit(s, what, err);
}

/* ---- reads ----------------------------------------------------------------- */

int tb_store_resolve_run(tb_store *s, const char *which, int64_t *run_id, char *err) {
    sqlite3_stmt *st = NULL;
    uint64_t id = 0;
    int rc, latest = !which || strcmp(which, "latest") == 0;
    char what[300];
    snprintf(what, sizeof what, "resolve run in %s", s->path);
    if (!latest && (tb_parse_u64(which, &id, NULL) != 0 || id == 0 || id > (uint64_t)INT64_MAX)) {
        tb_seterr(err, "run '%s': not a run id (a positive number) or 'latest'", which);
        return -1;
    }
    rc = sqlite3_prepare_v2(s->db, latest ? "SELECT max(id) FROM runs" : "SELECT id FROM runs WHERE id = ?1", -1, &st,
                            NULL);
    if (rc != SQLITE_OK) {
        set_db_err(s, err, what);
        return -1;
    }
    if (!latest) sqlite3_bind_int64(st, 1, (int64_t)id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        *run_id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return 0;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        set_db_err(s, err, what);
    else if (latest)
        tb_seterr(err, "no runs in %s", s->path);
    else
        tb_seterr(err, "run %llu not found in %s", (unsigned long long)id, s->path);
    sqlite3_finalize(st);
    return -1;
}
