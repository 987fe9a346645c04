/*
 * loadgen.h: how the coordinator drives load generators. The interface is a
 * method table so that a remote-agent transport (agents on other hosts, fed
 * over Redis streams) can implement it later beside the local one; the
 * coordinator only ever sees tb_loadgen.
 *
 * The local implementation runs N worker threads, each with its own libevent
 * event_base; users are spread round-robin over workers. Per-op statistics
 * are kept per (tile, workload, op) and per steady-state phase, and merged
 * across workers when the coordinator collects a phase.
 */
#ifndef TB_LOADGEN_LOADGEN_H
#define TB_LOADGEN_LOADGEN_H

#include <stdint.h>

#include "loadgen/workload.h"
#include "qos/hist.h"
#include "tiles/endpoints.h"
#include "tiles/tiledef.h"

#define TB_MAX_PHASES 100

/* Steady-state statistics of one op. */
typedef struct tb_opstat {
    uint64_t count;  /* successful ops (in the window) */
    uint64_t errors; /* failed ops (in the window) */
    uint64_t err_by_class[TB_OP_NSTATUS];
    tb_hist *hist;     /* corrected latency (intended start -> end), µs; NULL until first record */
    tb_hist *hist_unc; /* uncorrected latency (sent -> end), µs */
} tb_opstat;

/* Statistics of one interval for every (tile, workload, op). */
typedef struct tb_lg_stats {
    int tiles, n_workloads;
    tb_opstat *cells; /* tiles * n_workloads * TB_MAX_OPS */
} tb_lg_stats;

/* Cell of tile (1-based), workload index w, op index op. */
tb_opstat *tb_lg_cell(tb_lg_stats *s, int tile, int w, int op);
tb_lg_stats *tb_lg_stats_new(int tiles, int n_workloads);
/* 1 when a and b (both non-NULL) have the same tiles and n_workloads. */
int tb_lg_stats_same_shape(const tb_lg_stats *a, const tb_lg_stats *b);
/* Adds src into dst, exactly (counts add, histograms merge bucket by
 * bucket). The shapes must match (tb_lg_stats_same_shape; asserted): check
 * a decoded src first. */
void tb_lg_stats_merge(tb_lg_stats *dst, const tb_lg_stats *src);
void tb_lg_stats_free(tb_lg_stats *s); /* NULL is a no-op */

/*
 * Wire encoding (layout in loadgen/lg_stats.c): a fixed-width little-endian
 * header with the shape, then only the cells holding anything, with their
 * histograms as tb_hist_encode BLOBs, so a load-generator agent on another
 * host can send a phase's statistics for the coordinator to merge exactly.
 * Encode: *out is malloc'd (caller frees); 0, or -1 (nothing allocated) when
 * the encoding cannot be made (past 1 GiB).
 * Decode: a new tb_lg_stats into *out (caller frees), or -1 with err and
 * *out = NULL on anything malformed (bad magic or version, a TB_MAX_OPS or
 * TB_OP_NSTATUS other than ours, tiles outside 1..100000 or workloads outside
 * 1..TB_MAX_WORKLOADS, a cell out of range, repeated or out of order, an
 * empty cell, a histogram tb_hist_decode refuses, truncated or trailing
 * input). Never reads past buf + len. A buffer that decodes re-encodes to
 * the same bytes.
 */
int tb_lg_stats_encode(const tb_lg_stats *s, uint8_t **out, size_t *len);
int tb_lg_stats_decode(const uint8_t *buf, size_t len, tb_lg_stats **out, char *err) TB_WUR;
/* The shape a buffer's header states, before decoding (and allocating for)
 * it, so a receiver can refuse one it does not expect. 0, or -1 with err. */
int tb_lg_stats_peek_shape(const uint8_t *buf, size_t len, int *tiles, int *n_workloads, char *err) TB_WUR;

/* The timeline of one load level, in monotonic µs. Phases are contiguous or
 * not; an op counts toward phase p iff its intended start is in
 * [phase_start, phase_end) and it ends before phase_end (Faban's rule). */
typedef struct tb_level_plan {
    int tiles;
    /* The tiles this load generator runs: tile_lo..tile_hi within 1..tiles,
     * or 0/0 for all. The statistics keep every tile's cells (those of other
     * tiles stay empty), and each user keeps the ramp-up offset it has when
     * all tiles run (tb_lg_ramp_offset_us), so load generators that run
     * ranges 1..k and k+1..tiles together start their users as one would. */
    int tile_lo, tile_hi;
    /* The workloads that run this level: bit w set runs workload w (index in
     * def) in every tile; 0 runs them all. A consolidation-interference level
     * runs one workload alone (--interference); the others start no user, and
     * the ramp-up offsets stay those of the whole tile. */
    unsigned workload_mask;
    uint64_t start_us; /* ramp-up begins: users start staggered over ramp_up_us */
    uint64_t ramp_up_us;
    int n_phases;
    uint64_t phase_start_us[TB_MAX_PHASES];
    uint64_t phase_end_us[TB_MAX_PHASES];
} tb_level_plan;

/* Ramp-up offset of user k (0-based) of workload w in tile t (1-based) of a
 * level of pl->tiles tiles: ramp_up_us * g / M, where g is the user's index
 * over every tile 1..pl->tiles (tile by tile, workload by workload) and M
 * the users of all those tiles, whatever tile range pl runs. */
uint64_t tb_lg_ramp_offset_us(const tb_level_plan *pl, const tb_tiledef *def, int t, int w, int k);

/*
 * Event-loop stalls of the load generator's workers over an interval. Each
 * worker runs a 20 ms ticker (a periodic timerfd) and records how late it
 * fires (its loop's stall: a late tick means every op due then started late
 * as well). A tick is late
 * for three reasons: the loop's own work (callbacks running long or many at
 * once), time the thread was runnable but waiting for a CPU (the OS
 * scheduler running other processes, such as SUT servers on the same cores),
 * and a wake-up that came late (timer slack, a hypervisor). own_* is the
 * loop's own share of each tick's lateness: the lateness less the thread's
 * run-queue wait since the previous tick (Linux's run_delay from
 * /proc/thread-self/schedstat), and at most the CPU time the thread used in
 * that time (CLOCK_THREAD_CPUTIME_ID). Without schedstat it is the lateness
 * capped at the CPU time.
 */
typedef struct tb_lg_stalls {
    uint64_t max_us, p99_us;         /* tick lateness, worst and p99, µs */
    uint64_t own_max_us, own_p99_us; /* the loop's own work's share, worst and p99, µs */
    double cpu_wait_pct;             /* run-queue wait, % of the interval, mean over workers; NaN: unknown */
} tb_lg_stalls;

/* One part of a load generator made of several (an agent): what it ran in
 * the phase collected last, for the per-agent figures and rules. */
typedef struct tb_lg_part {
    char name[64], host[128];
    int tile_lo, tile_hi; /* its tiles this level; 0/0: none */
    int threads, users;
    uint64_t ops, errors; /* in the phase */
    double cpu_s;         /* CPU seconds used for work in the phase */
    tb_lg_stalls stalls;  /* its loop stalls in the phase */
    int clock_known;      /* offset and bound measured at the level's start */
    int64_t clock_offset_us;
    uint64_t clock_bound_us;
    int64_t lost_wall_us; /* when it was lost (unix µs); 0: it was not */
} tb_lg_part;

typedef struct tb_loadgen_ops {
    /* Creates the level's users and schedules them. Returns at once. */
    int (*start_level)(void *self, const tb_level_plan *plan, char *err);
    /* Phase p (0-based) statistics merged over workers; call after its end.
     * *out caller frees with tb_lg_stats_free. */
    int (*collect_phase)(void *self, int phase, tb_lg_stats **out, char *err);
    /* Optional (NULL: it cannot). The latency of phase p's ops (0-based:
     * those the phase counts) recorded since the previous call, per
     * (workload, op), in *out's tile-1 cells (count, hist; caller frees):
     * an interval, for live figures, apart from the phase's measured
     * statistics. The first call for a phase starts the record (its *out is
     * empty, or holds the tail of the phase before). 0, or -1 when no level
     * runs or p is out of range. */
    int (*take_live)(void *self, int phase, tb_lg_stats **out);
    /* Ops completed / failed so far in this level, any stage (for progress). */
    void (*live)(void *self, uint64_t *ops, uint64_t *errors);
    /* Stops and frees every user. *all gets counts over the whole level, every
     * stage (count/errors only, no histograms); caller frees. */
    int (*stop_level)(void *self, tb_lg_stats **all, char *err);
    /* Event-loop stalls since the previous call (or start_level), merged over
     * workers (each runs a 20 ms ticker and records how late it fires), into *out (see tb_lg_stalls). Resets the
     * record. */
    void (*stalls)(void *self, tb_lg_stalls *out);
    /* CPU seconds the load generator threads used so far for work: their
     * CPU time less what their spin-then-block loops spent polling without
     * finding any (that time was idle; see worker.c run_loop). */
    double (*cpu_seconds)(void *self);
    /* Worker threads actually running (the number asked for, or the online CPUs). */
    int (*threads)(void *self);
    /* Ops of workload w (index in def): how many; op k's name ("Order"); 1
     * when op k counts toward throughput. */
    int (*n_ops)(void *self, int w);
    const char *(*op_name)(void *self, int w, int k);
    int (*op_is_metric)(void *self, int w, int k);
    /* Op k's target share in % of workload w's primary ops, for the mix
     * deviation rule; -1 when it has none (not in the mix, or the workload
     * has no mix rule). */
    double (*mix_target_pct)(void *self, int w, int k);
    /* SUT-ready check before the sweep: every workload's servers answer and
     * hold data for tiles 1..tiles. 0, or -1 with err naming the endpoint. */
    int (*probe)(void *self, int tiles, char *err);
    void (*close)(void *self);
    /* Optional (NULL: the load generator is one whole). Its parts (agents on
     * other hosts) as of the phase collected last: up to max into out;
     * returns how many. */
    int (*parts)(void *self, struct tb_lg_part *out, int max);
    /* Optional. Why the level in progress cannot be trusted ("" when it
     * can): a part lost, results that never arrived. */
    const char *(*level_fault)(void *self);
    /* Optional. Why it cannot run another level (every agent is lost), NULL
     * while it can: the run then stops as aborted, keeping what it stored. */
    const char *(*gone)(void *self);
    /* Optional (NULL: it cannot). Moves tile's kv users to the Redis at
     * host:port while they run: each user's next op goes there (an op in
     * flight finishes where it began). An infrastructure `migrate` op calls
     * it (docs/infra.md). 0, or -1 with err. */
    int (*kv_switch)(void *self, int tile, const char *host, int port, char *err);
} tb_loadgen_ops;

/* A load generator as the coordinator sees it: its methods and the tile
 * definition it runs; how it runs the workloads is its own. */
typedef struct tb_loadgen {
    const tb_loadgen_ops *ops;
    void *self;
    const tb_tiledef *def;
    /* How far ahead of its start a level must be planned, µs: time to get
     * the plan to every user's thread (0: the coordinator's default). */
    uint64_t lead_us;
} tb_loadgen;

/*
 * Local load generator: `threads` worker threads (0 = number of online CPUs),
 * workloads of def configured against ep. def and ep must outlive it.
 * Returns 0 or -1 with err (a workload's configure error). Caller closes with
 * tb_loadgen_close.
 */
int tb_loadgen_local_open(const tb_tiledef *def, const tb_sut_endpoints *ep, int threads, tb_loadgen **out,
                          char *err) TB_WUR;
void tb_loadgen_close(tb_loadgen *lg); /* NULL is a no-op */
/* lg->ops->kv_switch, or -1 with err saying this load generator cannot. */
int tb_loadgen_kv_switch(tb_loadgen *lg, int tile, const char *host, int port, char *err) TB_WUR;
/* The worker threads the local load generator runs for `threads` asked
 * (0 = the online CPUs): what its ops->threads will report. */
int tb_loadgen_local_threads(int threads);

/* Whether this process may open the sockets `tiles` tiles of def's users
 * need (each workload's sockets per user, and 256 more), raising the soft
 * open-files limit up to the hard one when it is short. 0, or -1 with err
 * ("120 users at 60 tiles need about 376 open files, and the limit is 100
 * (raise it with ulimit -n, ...)"). */
int tb_loadgen_fd_check(const tb_tiledef *def, int tiles, char *err) TB_WUR;
/* The open files tb_loadgen_fd_check asks for at `tiles` tiles (each
 * workload's sockets per user times its users, and 256 more); *users (when
 * not NULL) gets the users of those tiles. For `tilebench doctor`. */
unsigned long long tb_loadgen_fd_need(const tb_tiledef *def, int tiles, unsigned long long *users);

/* Checks every workload's own keys (its configure()) against stand-in
 * endpoints, and the workers' environment (TB_WORKER_NICE, TB_WORKER_SPIN_US,
 * TB_WORKER_SCHED), so a bad key or value is reported before any server
 * starts or any file is made. 0, or -1 with err (file:line, section, key; or
 * the variable). */
int tb_loadgen_check(const tb_tiledef *def, char *err) TB_WUR;
/* The scheduling policy def's local workers will run ("SCHED_BATCH",
 * "SCHED_OTHER", or one the process inherited: docs/method.md), or NULL when
 * the workers' environment is bad (err says why). */
const char *tb_loadgen_local_sched(const tb_tiledef *def, char *err);
/* Checks the workers' environment alone (an agent, before it takes runs).
 * 0, or -1 with err naming the bad variable. */
int tb_loadgen_env_check(char *err) TB_WUR;

#endif
