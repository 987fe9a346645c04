/*
 * infra.h: infrastructure operations ([infra.NAME] in the tile file, VMmark's
 * infrastructure workloads): deploy, backup, migrate and command, run beside
 * the tiles during a load level by infrastructure users whose number scales
 * with the tiles (one per tiles_per_user tiles, at least one). Each op is
 * timed, counted and histogrammed like a tile op, by the same rule (an op
 * counts toward phase p when it started in the phase and ended before its
 * end), and what it did is kept (a command's stdout and stderr, capped; a
 * line for the others). Every temporary cluster, backup and Redis instance
 * an op makes lives under the runner's folder and is removed when the op
 * ends and, whatever happens, by tb_infra_stop. docs/infra.md tells the
 * kinds, their keys and where the defaults come from.
 *
 * The coordinator starts a runner for each level and collects each phase;
 * it prints nothing, and neither does this.
 */
#ifndef TB_INFRA_INFRA_H
#define TB_INFRA_INFRA_H

#include <stdint.h>

#include "common/tb_common.h"
#include "loadgen/loadgen.h"
#include "qos/hist.h"
#include "tiles/endpoints.h"
#include "tiles/tiledef.h"

/* Ops kept per operation and level besides the failed ones (each failed
 * op's output is kept, up to TB_INFRA_KEEP_FAILED per operation and level). */
#define TB_INFRA_KEEP_OK     3
#define TB_INFRA_KEEP_FAILED 20

/* One operation over one phase. */
typedef struct tb_infra_stat {
    int users;
    uint64_t ops, errors; /* in the phase (Faban's rule) */
    uint64_t err_by_class[TB_OP_NSTATUS];
    uint64_t count_all; /* ended since the level began, any stage, ok or not */
    uint64_t bytes;     /* moved by the phase's successful ops */
    uint64_t busy_us;   /* summed duration of the phase's successful ops that moved bytes */
    tb_hist *hist;      /* durations of the phase's ops (ok and failed), µs; NULL: none */
} tb_infra_stat;

/* What one op did (an entry of tb_infra_collect's outputs). */
typedef struct tb_infra_op_output {
    int infra; /* index in def->infra */
    int user, tile;
    int64_t start_wall_us;
    uint64_t duration_us;
    tb_op_status status;
    int exit_code; /* a command's exit status; -1 none (killed, not a command) */
    char *text;    /* heap, never NULL */
} tb_infra_op_output;

/* How a migrate op moves a tile's kv users: the load generator's
 * tb_loadgen_kv_switch, passed by the coordinator. 0, or -1 with err. */
typedef int (*tb_infra_kv_switch_fn)(void *arg, int tile, const char *host, int port, char *err);

typedef struct tb_infra_level {
    int tiles;         /* the level's tiles */
    int level;         /* the level's number in the run, 1-based: {level} */
    uint64_t start_us; /* monotonic µs when the users begin (the end of ramp-up) */
    uint64_t end_us;   /* when they stop: ops still running are killed, not counted */
    int n_phases;      /* the steady-state phases ([start, end) each, monotonic µs) */
    uint64_t phase_start_us[TB_MAX_PHASES];
    uint64_t phase_end_us[TB_MAX_PHASES];
    tb_infra_kv_switch_fn kv_switch; /* NULL: migrate ops fail "this load generator cannot switch" */
    void *kv_switch_arg;
} tb_infra_level;

typedef struct tb_infra tb_infra;

/* Infrastructure users of operation d at `tiles` tiles: ceil(tiles /
 * tiles_per_user), at least 1. */
int tb_infra_users(const tb_infra_def *d, int tiles);

/*
 * Before anything starts: every program the file's operations need is
 * there (initdb, postgres, pg_basebackup, pg_verifybackup, redis-server,
 * /bin/sh), and the SUT endpoints they act on are given (backup and deploy
 * need [sut] pg, migrate redis). 0, or -1 with err naming the program and
 * the Debian package that holds it ("backup: pg_basebackup not found (in
 * /usr/lib/postgresql/15/bin and the PATH): install postgresql-client-15").
 */
int tb_infra_check(const tb_tiledef *def, const tb_sut_endpoints *ep, char *err) TB_WUR;

/*
 * Starts the infrastructure users of every operation of def for one level,
 * working under dir (a folder the caller made and removes; each op makes
 * its own sub-folder in it and removes it). def, ep and dir must outlive the
 * runner. NULL with err when a thread cannot start.
 */
tb_infra *tb_infra_start(const tb_tiledef *def, const tb_sut_endpoints *ep, const char *dir, const tb_infra_level *lv,
                         char *err) TB_WUR;

/*
 * After phase p (0-based) has ended: each operation's figures over it
 * (stats[def->n_infra], caller frees with tb_infra_stats_free) and what the
 * ops ended since the previous collect did (*outs, *n_outs; caller frees
 * with tb_infra_outputs_free). An op that started in the phase but had not
 * ended by its end does not count in it, so this does not wait for ops to
 * end: only, for at most 1 s after the phase's end, for the record of an op
 * of the phase that is still being recorded. 0, or -1 with err.
 */
int tb_infra_collect(tb_infra *r, int p, tb_infra_stat **stats, tb_infra_op_output **outs, int *n_outs,
                     char *err) TB_WUR;
void tb_infra_stats_free(tb_infra_stat *stats, int n);
void tb_infra_outputs_free(tb_infra_op_output *outs, int n);

/* Stops every user: an op still running is killed (its process group
 * SIGTERM, then SIGKILL), every temporary cluster, backup and Redis instance
 * is removed, a migrated tile's kv users are switched back to the SUT's
 * Redis, and the threads are joined. Safe from any exit path; NULL no-op. */
void tb_infra_stop(tb_infra *r);

#endif
