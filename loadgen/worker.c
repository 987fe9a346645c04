/*
 * worker.c: the local load generator. N worker threads, one libevent
 * event_base each (as wrk and memtier do), running closed-loop virtual users.
 *
 * Timing follows the intended-start rule: every op has a moment it was due
 * (ramp-up offset, then previous end + think time, or previous due time +
 * cycle time), its timer is armed for that moment, and latency is measured
 * from it. A late event loop or a slow server therefore shows up as latency,
 * never as silently missing samples (coordinated omission; wrk2, pgbench
 * --rate). The uncorrected latency (from the actual send) is kept too.
 *
 * Statistics are kept per worker under a mutex that only the worker and, at
 * phase ends, the coordinator take, so recording is uncontended.
 *
 * Cost per op (max-rate mode, bench/http): each event_base is touched by its
 * own thread only (the coordinator's commands arrive through an eventfd), so
 * the bases are built without libevent's locks; the op timeout is armed
 * lazily (one timer add per timeout period, not an add and a delete per op);
 * the clock is read once when an op starts and once when it ends; a tile
 * whose workloads all run at max rate gets coarse libevent timers, which
 * spares a timerfd_settime per loop turn (needs_precise_timers); the stall
 * probe is a kernel periodic timer that wakes the loop 50 times a second;
 * the workers of such a tile run SCHED_BATCH, so a reply that wakes one does
 * not take the CPU from the server thread that wrote it (worker_env.c); and,
 * when TB_WORKER_SPIN_US asks for it, the loop spins briefly before it sleeps
 * (run_loop), so a saturated server is not made to wake it for every response.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "loadgen/lg_live.h"
#include "loadgen/loadgen.h"
#include "loadgen/worker_env.h"

enum { CMD_NONE = 0, CMD_START, CMD_STOP, CMD_QUIT };
enum { THINK_FIXED = 0, THINK_UNIFORM, THINK_NEGEXP };

typedef struct worker worker;
typedef struct local_lg local_lg;

struct tb_user_ctx {
    worker *w;
    int wl;    /* workload index in the tile definition */
    int tile;  /* 1-based */
    int index; /* user index within tile and workload */
    uint64_t start_offset_us;
    const tb_workload_vt *vt;
    const tb_workload_def *def;
    void *st;
    struct event *timer;   /* fires at the intended start of the next op */
    struct event *timeout; /* armed while an op may be in flight; see arm_timeout */
    int timeout_armed;     /* timeout is pending */
    int think;             /* THINK_*: def->think_dist */
    struct event *soon;    /* completes an op on the next loop turn */
    tb_op_status soon_status;
    uint64_t intended_us, sent_us;
    uint64_t delay_us; /* extra wait before the next op (tb_user_delay_next) */
    int op;
    int next_op; /* picked at scheduling time (for a per-op minimum cycle), -1 = not yet */
    int busy;
    uint64_t rng[4];
};

struct worker {
    local_lg *lg;
    int id;
    pthread_t th;
    clockid_t cpu_clock;
    int have_cpu_clock;
    struct event_base *base;
    int cmd_fd;           /* eventfd: the coordinator's "a command is waiting" */
    struct event *cmd_ev; /* EV_READ on cmd_fd */
    pthread_mutex_t lock; /* guards cmd*, stats */
    pthread_cond_t cond;
    int cmd, cmd_done;
    int running; /* the thread runs (lg_close must stop and join it) */
    /* users of the current level */
    tb_user_ctx **users;
    int n_users;
    /* statistics of the current level */
    tb_level_plan plan;
    tb_lg_stats *phase[TB_MAX_PHASES];
    int collected[TB_MAX_PHASES];
    tb_lg_stats *all;
    atomic_uint_fast64_t ops_done, errors_done;
    tb_lg_live live; /* guarded by lock: the live latency record (lg_live.h) */
    /* per workload: its op timeout as a libevent "common timeout", so an
     * add is O(1) instead of a heap operation, and in µs */
    const struct timeval *op_timeout[TB_MAX_WORKLOADS];
    uint64_t op_timeout_us[TB_MAX_WORKLOADS];
    /* loop-stall probe: a ticker whose lateness is the loop's stall */
    int tick_fd;             /* periodic timerfd (CLOCK_MONOTONIC), or -1 */
    struct event *ticker;    /* EV_READ on tick_fd */
    uint64_t tick_due_us;    /* the next expiry of tick_fd, as tb_now_us */
    int schedstat_fd;        /* /proc/thread-self/schedstat of the worker thread, -1: unknown */
    uint64_t run_delay_ns;   /* its run_delay at the previous tick */
    uint64_t tick_cpu_us;    /* its CPU time at the previous tick */
    tb_hist *stall_hist;     /* guarded by lock: tick lateness */
    tb_hist *own_hist;       /* guarded by lock: the part of the tick lateness the loop's own work explains */
    uint64_t cpu_wait_us;    /* guarded by lock: run-queue wait since probe_since_us */
    uint64_t probe_since_us; /* guarded by lock */
    int quit;                /* CMD_QUIT carried out: the loop returns */
    /* start_users' cursor: the next global user to build (build_users) */
    struct user_cursor {
        int tile, wl, k; /* tile (1-based), workload, user within both */
        int g;           /* its global index over every tile 1..tiles */
    } build;
    struct event *build_ev; /* zero timer: build the next chunk */
    /* spin-then-block (run_loop): how often a spin found an op completing */
    double spin_hit;                   /* EWMA of 0/1 per spin, 1/8 weight */
    unsigned spin_probe;               /* idle moments since the last spin */
    atomic_uint_fast64_t spin_idle_us; /* CPU spent spinning without finding work (run_loop) */
};

/* Tiles per worker from which a tile's users all go to one worker. */
#define TILES_PER_WORKER_AFFINE 8

/* Ticker period of the stall probe. Each tick that finds the loop asleep
 * costs a wakeup (about 35 µs of CPU in a small VM), so the period trades
 * the probe's sample count against the generator's own CPU: 20 ms gives 50
 * samples per second per worker (3000 over a one-minute phase, plenty for a
 * p99) at about 0.2% of a core per worker, where 5 ms cost about 4% of the
 * client CPU of a max-rate run (bench/http). The ticker is a kernel periodic
 * timerfd, not a libevent timer, so it keeps its precision on a base with
 * coarse timers (see worker_init) and costs no syscall besides one read per
 * tick. */
#define STALL_TICK_US 20000

struct local_lg {
    tb_loadgen pub;
    const tb_sut_endpoints *ep;
    const tb_workload_vt *vt[TB_MAX_WORKLOADS]; /* per workload of pub.def */
    void *cfg[TB_MAX_WORKLOADS];                /* what each vt->configure made */
    int n_workers;
    worker *workers;
    tb_level_plan plan;
    int level_running;
    tb_worker_env env; /* nice, spin window, scheduling policy (worker_env.h) */
};

/* Records one finished op. intended_us is when it was due; Faban's rule
 * decides which phase (if any) it belongs to. */
static void record(tb_user_ctx *u, int op, uint64_t intended_us, uint64_t sent_us, uint64_t end_us, tb_op_status st) {
    worker *w = u->w;
    const tb_level_plan *pl = &w->plan;
    pthread_mutex_lock(&w->lock);
    if (w->all) {
        tb_opstat *a = tb_lg_cell(w->all, u->tile, u->wl, op);
        if (st == TB_OP_OK)
            a->count++;
        else
            a->errors++;
    }
    for (int p = 0; p < pl->n_phases; p++) {
        tb_opstat *c;
        if (intended_us < pl->phase_start_us[p] || intended_us >= pl->phase_end_us[p]) continue;
        if (end_us >= pl->phase_end_us[p] || w->collected[p]) break;
        if (!w->phase[p]) w->phase[p] = tb_lg_stats_new(pl->tiles, w->lg->pub.def->n_workloads);
        c = tb_lg_cell(w->phase[p], u->tile, u->wl, op);
        if (st == TB_OP_OK) {
            c->count++;
            if (!c->hist) c->hist = tb_hist_new();
            if (!c->hist_unc) c->hist_unc = tb_hist_new();
            /* a timer may fire a hair before its due time: never record negative */
            tb_hist_record(c->hist, end_us > intended_us ? end_us - intended_us : 0);
            tb_hist_record(c->hist_unc, end_us > sent_us ? end_us - sent_us : 0);
            tb_lg_live_record(&w->live, p, u->wl, op, end_us > intended_us ? end_us - intended_us : 0);
        } else {
            c->errors++;
            c->err_by_class[st]++;
        }
        break;
    }
    pthread_mutex_unlock(&w->lock);
    atomic_fetch_add(&w->ops_done, 1);
    if (st != TB_OP_OK) atomic_fetch_add(&w->errors_done, 1);
}

/* ---- users --------------------------------------------------------------- */

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman and Vigna, public domain algorithm). */
uint64_t tb_user_rand(tb_user_ctx *u) {
    uint64_t *s = u->rng;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double tb_user_rand01(tb_user_ctx *u) { return (double)(tb_user_rand(u) >> 11) * 0x1.0p-53; }

int tb_user_rand_range(tb_user_ctx *u, int lo, int hi) {
    if (hi <= lo) return lo;
    return lo + (int)(tb_user_rand(u) % (uint64_t)(hi - lo + 1));
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct event_base *tb_user_base(tb_user_ctx *u) {
    return u->w->base;
}
uint64_t tb_user_intended_us(const tb_user_ctx *u) { return u->intended_us; }
uint64_t tb_user_sent_us(const tb_user_ctx *u) { return u->sent_us; }
int tb_user_tile(const tb_user_ctx *u) { return u->tile; }
int tb_user_index(const tb_user_ctx *u) { return u->index; }

/* Think or cycle time draw in µs: uniform 0..2x mean (DS2), negative
 * exponential truncated at 5x mean (Olio/Faban), or fixed. */
static uint64_t draw_think(tb_user_ctx *u) {
    double mean = (double)u->def->think_us;
    if (u->think == THINK_UNIFORM) return (uint64_t)(tb_user_rand01(u) * 2.0 * mean);
    if (u->think == THINK_NEGEXP) {
        double x = -mean * log(1.0 - tb_user_rand01(u));
        return (uint64_t)(x > 5 * mean ? 5 * mean : x);
    }
    return u->def->think_us;
}

/* Arms the user's next op for intended_us; now is the current time. */
static void schedule(tb_user_ctx *u, uint64_t intended_us, uint64_t now) {
    uint64_t d;
    struct timeval tv;
    u->intended_us = intended_us;
    if (intended_us <= now) {
        /* already due (zero think time, or running late): skip the timer heap */
        event_active(u->timer, EV_TIMEOUT, 1);
        return;
    }
    d = intended_us - now;
    tv.tv_sec = (time_t)(d / 1000000);
    tv.tv_usec = (suseconds_t)(d % 1000000);
    evtimer_add(u->timer, &tv);
}

/* Schedules the op after the one that ended at end_us (the current time). */
static void schedule_next(tb_user_ctx *u, uint64_t end_us) {
    uint64_t think = draw_think(u);
    if (u->vt->min_cycle_us) {
        /* the next op must be known now: its own minimum gap applies (Olio:
         * an AddPerson comes at least 2 s after the previous op) */
        uint64_t m;
        u->next_op = u->vt->next_op(u->st);
        m = u->vt->min_cycle_us(u->w->lg->cfg[u->wl], u->next_op);
        if (think < m) think = m;
    }
    think += u->delay_us;
    /* a back-off restarts the cycle grid: missed cycles are not owed */
    uint64_t base = u->def->cycle && !u->delay_us ? u->intended_us : end_us;
    u->delay_us = 0;
    schedule(u, base + think, end_us);
}

void tb_user_delay_next(tb_user_ctx *u, uint64_t us) { u->delay_us = us; }

/*
 * The op timeout is armed lazily: an op that starts while the timeout event
 * is already pending (set by an earlier op, so due no later than this op's
 * deadline) leaves it alone, and a completed op does not delete it. When it
 * fires, on_timeout compares the op in flight's own deadline (sent_us +
 * timeout) with the clock and re-arms for the rest, so every op still times
 * out exactly when it overruns; a user that keeps finishing its ops in time
 * costs one timer add per timeout period instead of an add and a delete per
 * op. (Ends of ops are not affected: tb_user_op_done does not touch it.)
 */
static void arm_timeout(tb_user_ctx *u, uint64_t now) {
    uint64_t t = u->w->op_timeout_us[u->wl], due = u->sent_us + t, d = due > now ? due - now : 0;
    struct timeval tv;
    u->timeout_armed = 1;
    if (d >= t) { /* an op starting now: the workload's common timeout (O(1) add) */
        evtimer_add(u->timeout, u->w->op_timeout[u->wl]);
        return;
    }
    tv.tv_sec = (time_t)(d / 1000000);
    tv.tv_usec = (suseconds_t)(d % 1000000);
    evtimer_add(u->timeout, &tv);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
    tb_user_ctx *u = arg;
    uint64_t now = tb_now_us();
    (void)fd;
    (void)what;
    if (now + 50 < u->intended_us) {
        /* libevent measured the delay from its cached loop time and woke a
         * little early: wait for the rest, an op never starts before it is due */
        schedule(u, u->intended_us, now);
        return;
    }
    u->op = u->next_op >= 0 ? u->next_op : u->vt->next_op(u->st);
    u->next_op = -1;
    u->sent_us = now;
    u->busy = 1;
    if (!u->timeout_armed) arm_timeout(u, now);
    u->vt->op_start(u->st, u->op);
}

void tb_user_op_done_at(tb_user_ctx *u, tb_op_status st, uint64_t end_us) {
    if (!u->busy) return; /* a late completion after a timeout: already counted */
    u->busy = 0;
    record(u, u->op, u->intended_us, u->sent_us, end_us, st);
    schedule_next(u, end_us);
}

void tb_user_op_done(tb_user_ctx *u, tb_op_status st) { tb_user_op_done_at(u, st, tb_now_us()); }

static void on_soon(evutil_socket_t fd, short what, void *arg) {
    tb_user_ctx *u = arg;
    (void)fd;
    (void)what;
    tb_user_op_done(u, u->soon_status);
}

void tb_user_op_done_soon(tb_user_ctx *u, tb_op_status st) {
    static const struct timeval zero = {0, 0};
    u->soon_status = st;
    evtimer_add(u->soon, &zero);
}

void tb_user_record_step(tb_user_ctx *u, int op, uint64_t due_us, uint64_t sent_us, uint64_t end_us, tb_op_status st) {
    record(u, op, due_us, sent_us, end_us, st);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg) {
    tb_user_ctx *u = arg;
    uint64_t end = tb_now_us();
    (void)fd;
    (void)what;
    u->timeout_armed = 0;
    if (!u->busy) return; /* no op in flight: the next op arms it again */
    if (end < u->sent_us + u->w->op_timeout_us[u->wl]) {
        /* armed for an earlier op: this one is not due yet */
        arm_timeout(u, end);
        return;
    }
    u->busy = 0;
    evtimer_del(u->soon);
    u->vt->op_cancel(u->st);
    record(u, u->op, u->intended_us, u->sent_us, end, TB_OP_ERR_TIMEOUT);
    schedule_next(u, end);
}

static void user_free(tb_user_ctx *u) {
    if (!u) return;
    if (u->timer) event_free(u->timer);
    if (u->timeout) event_free(u->timeout);
    if (u->soon) event_free(u->soon);
    if (u->st) u->vt->user_free(u->st);
    free(u);
}

/* ---- worker thread ------------------------------------------------------- */

static void worker_fini(worker *w);

/* Users built per loop turn (build_users): each costs a few µs (its state
 * and three timer events), so a chunk is well under a millisecond of the
 * loop's time, where building a 200-tile level's 2,700 users per worker in
 * one turn held the loop for 12-25 ms (bench/scale, ramp-up stall). */
#define BUILD_CHUNK 128

static void build_users(evutil_socket_t fd, short what, void *arg);

/* Starts this worker's share of the level's users: the first BUILD_CHUNK at
 * once, the rest a chunk per loop turn (build_users), in the order they are
 * due. The coordinator plans the level's start far enough ahead for all of
 * them (200 ms); a user built after its intended start still gets that
 * start, and the lateness shows in its latency. */
static void start_users(worker *w) {
    local_lg *lg = w->lg;
    const tb_tiledef *def = lg->pub.def;
    const tb_level_plan *pl = &w->plan;
    int total = 0, per_tile = 0;
    for (int i = 0; i < def->n_workloads; i++)
        per_tile += def->workloads[i].users;
    total = per_tile * (pl->tile_hi - pl->tile_lo + 1); /* the users of this range */
    w->users = xcalloc((size_t)total + 1, sizeof *w->users);
    w->n_users = 0;
    for (int i = 0; i < def->n_workloads; i++) {
        uint64_t t = def->workloads[i].timeout_us;
        struct timeval tv = {.tv_sec = (time_t)(t / 1000000), .tv_usec = (suseconds_t)(t % 1000000)};
        w->op_timeout[i] = event_base_init_common_timeout(w->base, &tv);
        w->op_timeout_us[i] = t;
    }
    memset(&w->build, 0, sizeof w->build);
    w->build.tile = pl->tile_lo;
    w->build.g = per_tile * (pl->tile_lo - 1);
    build_users(-1, 0, w);
}

/* Builds up to BUILD_CHUNK more of this worker's users (start_users'
 * cursor), and when some are left, comes back on the next loop turn (a
 * zero timer: I/O, due users and the stall probe run in between). Only the
 * plan's tiles tile_lo..tile_hi get users. Global user g (counted over every
 * tile 1..tiles) starts at g/M of the ramp-up, M the users of all tiles
 * (staggered start, tb_lg_ramp_offset_us). It goes to worker g % n, unless
 * the range has at least TILES_PER_WORKER_AFFINE tiles per worker: then a
 * whole tile t goes to worker (t-1) % n, so each tile's histograms
 * exist in one worker instead of every one (at 200 tiles and 2 workers this
 * halves the histogram memory and its allocations during steady state), and
 * the workers' shares differ by at most one tile in that many. */
static void build_users(evutil_socket_t fd, short what, void *arg) {
    static const struct timeval zero = {0, 0};
    worker *w = arg;
    local_lg *lg = w->lg;
    const tb_tiledef *def = lg->pub.def;
    const tb_level_plan *pl = &w->plan;
    struct user_cursor *b = &w->build;
    int made = 0, affine = pl->tile_hi - pl->tile_lo + 1 >= TILES_PER_WORKER_AFFINE * lg->n_workers;
    (void)fd;
    (void)what;
    for (; b->tile <= pl->tile_hi; b->tile++, b->wl = 0) {
        for (; b->wl < def->n_workloads; b->wl++, b->k = 0) {
            for (; b->k < def->workloads[b->wl].users; b->k++, b->g++) {
                int t = b->tile, i = b->wl, k = b->k;
                tb_user_ctx *u;
                uint64_t seed;
                if ((affine ? (t - 1) : b->g) % lg->n_workers != w->id) continue;
                if (pl->workload_mask && !(pl->workload_mask & (1u << i))) continue; /* not this level's */
                if (made == BUILD_CHUNK) {
                    evtimer_add(w->build_ev, &zero);
                    return;
                }
                made++;
                u = xcalloc(1, sizeof *u);
                u->w = w;
                u->wl = i;
                u->tile = t;
                u->index = k;
                u->vt = lg->vt[i];
                u->def = &def->workloads[i];
                u->next_op = -1;
                u->think = strcmp(u->def->think_dist, "uniform") == 0  ? THINK_UNIFORM
                           : strcmp(u->def->think_dist, "negexp") == 0 ? THINK_NEGEXP
                                                                       : THINK_FIXED;
                seed = ((uint64_t)t << 40) ^ ((uint64_t)i << 32) ^ (uint64_t)k ^ (uint64_t)pl->start_us;
                for (int r = 0; r < 4; r++)
                    u->rng[r] = splitmix(&seed);
                u->timer = evtimer_new(w->base, on_timer, u);
                u->timeout = evtimer_new(w->base, on_timeout, u);
                u->soon = evtimer_new(w->base, on_soon, u);
                u->start_offset_us = tb_lg_ramp_offset_us(pl, def, t, i, k);
                u->st = u->vt->user_new(lg->cfg[i], u);
                w->users[w->n_users++] = u;
                schedule(u, pl->start_us + u->start_offset_us, tb_now_us());
            }
        }
    }
}

uint64_t tb_lg_ramp_offset_us(const tb_level_plan *pl, const tb_tiledef *def, int t, int w, int k) {
    uint64_t per_tile = 0, before = 0, g, total;
    for (int i = 0; i < def->n_workloads; i++) {
        per_tile += (uint64_t)def->workloads[i].users;
        if (i < w) before += (uint64_t)def->workloads[i].users;
    }
    g = (uint64_t)(t - 1) * per_tile + before + (uint64_t)k;
    total = per_tile * (uint64_t)pl->tiles;
    return total ? pl->ramp_up_us * g / total : 0;
}

static void stop_users(worker *w) {
    evtimer_del(w->build_ev); /* a level stopped while its users were still being built */
    for (int i = 0; i < w->n_users; i++)
        user_free(w->users[i]);
    free(w->users);
    w->users = NULL;
    w->n_users = 0;
}

static void on_cmd(evutil_socket_t fd, short what, void *arg) {
    worker *w = arg;
    int cmd;
    uint64_t n;
    (void)what;
    if (read(fd, &n, sizeof n) < 0 && errno == EAGAIN) return; /* nothing waiting */
    pthread_mutex_lock(&w->lock);
    cmd = w->cmd;
    pthread_mutex_unlock(&w->lock);
    if (cmd == CMD_START)
        start_users(w);
    else if (cmd == CMD_STOP)
        stop_users(w);
    else if (cmd == CMD_QUIT) {
        stop_users(w);
        w->quit = 1;
        event_base_loopbreak(w->base);
    }
    pthread_mutex_lock(&w->lock);
    w->cmd = CMD_NONE;
    w->cmd_done = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* The calling thread's run_delay (ns spent runnable but waiting for a CPU)
 * from its /proc/thread-self/schedstat ("run_ns run_delay_ns slices").
 * Returns 0, or -1 when it cannot be read. */
static int read_run_delay(int fd, uint64_t *ns) {
    char buf[96];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    char *p, *e;
    if (n <= 0) return -1;
    buf[n] = '\0';
    p = strchr(buf, ' ');
    if (!p) return -1;
    *ns = strtoull(p + 1, &e, 10);
    return e == p + 1 ? -1 : 0;
}

/* CPU time of the calling thread, µs. */
static uint64_t thread_cpu_us(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The stall probe's tick. Its lateness is split: the thread's run-queue wait
 * since the previous tick is not the loop's doing, and the loop cannot have
 * worked longer than the CPU time it used; what is left over is a wake-up
 * that came late (timer, hypervisor). */
static void on_tick(evutil_socket_t fd, short what, void *arg) {
    worker *w = arg;
    uint64_t now, n, late, wait = 0, rd, own, cpu, used;
    (void)what;
    if (read(fd, &n, sizeof n) != (ssize_t)sizeof n || n == 0) return; /* not expired yet */
    now = tb_now_us();
    /* lateness of the first expiry not yet seen; after a stall longer than a
     * period the kernel counts the missed ones in n */
    late = now > w->tick_due_us ? now - w->tick_due_us : 0;
    cpu = thread_cpu_us();
    used = cpu > w->tick_cpu_us ? cpu - w->tick_cpu_us : 0;
    w->tick_cpu_us = cpu;
    if (w->schedstat_fd >= 0 && read_run_delay(w->schedstat_fd, &rd) == 0) {
        wait = rd > w->run_delay_ns ? (rd - w->run_delay_ns) / 1000 : 0;
        w->run_delay_ns = rd;
    }
    own = late > wait ? late - wait : 0;
    if (own > used) own = used;
    pthread_mutex_lock(&w->lock);
    tb_hist_record(w->stall_hist, late);
    tb_hist_record(w->own_hist, own);
    w->cpu_wait_us += wait;
    pthread_mutex_unlock(&w->lock);
    w->tick_due_us += n * STALL_TICK_US;
}

/* Spin-then-block, off unless TB_WORKER_SPIN_US asks for it. After a
 * wake-up the loop polls without blocking for up to spin_us for the next op
 * completion before it sleeps again, when recent spins mostly found one
 * (spin_hit >= 0.5); otherwise it sleeps at once, and spins only at every
 * SPIN_PROBE-th idle moment to notice load coming back. A spin saves the
 * server the wake-up of a sleeping client; it costs the client the CPU it
 * spins, and on cores shared with the server or the SUT it takes their CPU.
 * It was on by default at max rate until the same-run measurements of
 * bench/http and bench/oltp on a 2-core VM showed the client's CPU per op
 * higher with it and its throughput no better (bench/README.md): a lab with
 * a client host of spare cores may still find a window that pays. Timers and
 * the stall probe's tick still fire on time while spinning (a non-blocking
 * pass runs expired timers). */
#define SPIN_PROBE 64
#define SPIN_HIT   0.5 /* spin while at least this share of recent spins found work */

static void run_loop(worker *w) {
    uint64_t spin = w->lg->env.spin_us;
    if (!spin) {
        event_base_loop(w->base, EVLOOP_NO_EXIT_ON_EMPTY);
        return;
    }
    while (!w->quit) {
        if (event_base_loop(w->base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY) < 0) { /* sleeps until something is due */
            tb_log(TB_LOG_ERROR, "load generator worker %d: event loop failed", w->id);
            return;
        }
        while (!w->quit && (w->spin_hit >= SPIN_HIT || ++w->spin_probe >= SPIN_PROBE)) {
            uint64_t t0 = tb_now_us(), pass = t0, t = t0, idle;
            int hit = 0;
            w->spin_probe = 0;
            do {
                uint_fast64_t before = atomic_load_explicit(&w->ops_done, memory_order_relaxed);
                pass = t;
                event_base_loop(w->base, EVLOOP_NONBLOCK | EVLOOP_NO_EXIT_ON_EMPTY);
                hit = atomic_load_explicit(&w->ops_done, memory_order_relaxed) != before;
                t = tb_now_us();
            } while (!hit && !w->quit && t - t0 < spin);
            /* idle: the wall time up to the pass that found work (or all of
             * a miss), at most the window: a pass the scheduler preempted
             * cannot count its wait as spinning beyond that (no CPU clock is
             * read here: CLOCK_THREAD_CPUTIME_ID is a system call, two per
             * spin were 0.9 per request). An approximation: a pass that did
             * work without completing an op (a send, a partial read) counts
             * as idle, so the work figure can read a little low. */
            idle = (hit ? pass : t) - t0;
            atomic_fetch_add_explicit(&w->spin_idle_us, idle < spin ? idle : spin, memory_order_relaxed);
            w->spin_hit += ((hit ? 1.0 : 0.0) - w->spin_hit) / 8;
            if (!hit) break;
        }
    }
}

static void *worker_main(void *arg) {
    worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "tb-worker-%d", w->id);
    tb_worker_env_apply(&w->lg->env, w->id);
    /* named once its policy and nice are set: whoever finds a tb-worker thread sees them */
    prctl(PR_SET_NAME, name, 0, 0, 0); /* shows in top -H, perf sched and /proc/PID/task */
    {
        /* the thread's own run-queue counter (a -1 fd: the split is unknown) */
        int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read_run_delay(fd, &w->run_delay_ns) != 0) {
            close(fd);
            fd = -1;
        }
        w->tick_cpu_us = thread_cpu_us();
        pthread_mutex_lock(&w->lock);
        w->schedstat_fd = fd;
        pthread_mutex_unlock(&w->lock);
    }
    run_loop(w);
    return NULL;
}

/* Sends a command to a worker and waits until its thread has carried it out. */
static void send_cmd(worker *w, int cmd) {
    pthread_mutex_lock(&w->lock);
    w->cmd = cmd;
    w->cmd_done = 0;
    pthread_mutex_unlock(&w->lock);
    {
        uint64_t one = 1;
        ssize_t n;
        do
            n = write(w->cmd_fd, &one, sizeof one);
        while (n < 0 && errno == EINTR);
    }
    pthread_mutex_lock(&w->lock);
    while (!w->cmd_done)
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

/* ---- tb_loadgen methods -------------------------------------------------- */

static int lg_start_level(void *self, const tb_level_plan *plan, char *err) {
    local_lg *lg = self;
    if (lg->level_running) {
        tb_seterr(err, "load generator: a level is already running");
        return -1;
    }
    if (plan->n_phases < 1 || plan->n_phases > TB_MAX_PHASES || plan->tiles < 1) {
        tb_seterr(err, "load generator: bad level plan (tiles %d, phases %d)", plan->tiles, plan->n_phases);
        return -1;
    }
    if ((plan->tile_lo == 0) != (plan->tile_hi == 0) ||
        (plan->tile_lo != 0 && (plan->tile_lo < 1 || plan->tile_hi > plan->tiles || plan->tile_lo > plan->tile_hi))) {
        tb_seterr(err, "load generator: bad tile range %d..%d in a level of %d tiles (0..0 for all)", plan->tile_lo,
                  plan->tile_hi, plan->tiles);
        return -1;
    }
    if (lg->pub.def->n_workloads < 32 && (plan->workload_mask >> lg->pub.def->n_workloads) != 0) {
        tb_seterr(err, "load generator: workload mask 0x%x names a workload beyond the tile's %d", plan->workload_mask,
                  lg->pub.def->n_workloads);
        return -1;
    }
    lg->plan = *plan;
    if (lg->plan.tile_lo == 0) { /* all tiles */
        lg->plan.tile_lo = 1;
        lg->plan.tile_hi = plan->tiles;
    }
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        pthread_mutex_lock(&w->lock);
        w->plan = lg->plan;
        memset(w->phase, 0, sizeof w->phase);
        memset(w->collected, 0, sizeof w->collected);
        w->all = tb_lg_stats_new(plan->tiles, lg->pub.def->n_workloads);
        tb_lg_live_clear(&w->live);
        tb_hist_reset(w->stall_hist);
        tb_hist_reset(w->own_hist);
        w->cpu_wait_us = 0;
        w->probe_since_us = tb_now_us();
        atomic_store(&w->ops_done, 0);
        atomic_store(&w->errors_done, 0);
        pthread_mutex_unlock(&w->lock);
        send_cmd(w, CMD_START);
    }
    lg->level_running = 1;
    return 0;
}

static int lg_collect_phase(void *self, int phase, tb_lg_stats **out, char *err) {
    local_lg *lg = self;
    tb_lg_stats *m;
    if (!lg->level_running || phase < 0 || phase >= lg->plan.n_phases) {
        tb_seterr(err, "load generator: no phase %d to collect", phase + 1);
        return -1;
    }
    m = tb_lg_stats_new(lg->plan.tiles, lg->pub.def->n_workloads);
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        tb_lg_stats *s;
        pthread_mutex_lock(&w->lock);
        s = w->phase[phase];
        w->phase[phase] = NULL;
        w->collected[phase] = 1;
        pthread_mutex_unlock(&w->lock);
        if (s) tb_lg_stats_merge(m, s);
        tb_lg_stats_free(s);
    }
    *out = m;
    return 0;
}

static int lg_take_live(void *self, int phase, tb_lg_stats **out) {
    local_lg *lg = self;
    *out = NULL;
    if (!lg->level_running || phase < 0 || phase >= lg->plan.n_phases) return -1;
    *out = tb_lg_stats_new(1, lg->pub.def->n_workloads);
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        tb_lg_live taken;
        pthread_mutex_lock(&w->lock); /* pointers swapped: the worker waits for no merge */
        tb_lg_live_swap(&w->live, phase, &taken);
        pthread_mutex_unlock(&w->lock);
        tb_lg_live_drain(&taken, phase, *out);
    }
    return 0;
}

static void lg_live(void *self, uint64_t *ops, uint64_t *errors) {
    local_lg *lg = self;
    *ops = *errors = 0;
    for (int i = 0; i < lg->n_workers; i++) {
        *ops += atomic_load(&lg->workers[i].ops_done);
        *errors += atomic_load(&lg->workers[i].errors_done);
    }
}

static int lg_stop_level(void *self, tb_lg_stats **all, char *err) {
    local_lg *lg = self;
    tb_lg_stats *m;
    if (!lg->level_running) {
        tb_seterr(err, "load generator: no level running");
        return -1;
    }
    m = tb_lg_stats_new(lg->plan.tiles, lg->pub.def->n_workloads);
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        send_cmd(w, CMD_STOP);
        pthread_mutex_lock(&w->lock);
        tb_lg_stats_merge(m, w->all);
        tb_lg_stats_free(w->all);
        w->all = NULL;
        for (int p = 0; p < TB_MAX_PHASES; p++) {
            tb_lg_stats_free(w->phase[p]);
            w->phase[p] = NULL;
        }
        pthread_mutex_unlock(&w->lock);
    }
    lg->level_running = 0;
    if (all)
        *all = m;
    else
        tb_lg_stats_free(m);
    return 0;
}

static double lg_cpu_seconds(void *self) {
    local_lg *lg = self;
    double s = 0;
    for (int i = 0; i < lg->n_workers; i++) {
        struct timespec ts;
        if (lg->workers[i].have_cpu_clock && clock_gettime(lg->workers[i].cpu_clock, &ts) == 0)
            s += (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 -
                 (double)atomic_load_explicit(&lg->workers[i].spin_idle_us, memory_order_relaxed) / 1e6;
    }
    return s;
}

static void lg_stalls(void *self, tb_lg_stalls *out) {
    local_lg *lg = self;
    tb_hist *all = tb_hist_new(), *own = tb_hist_new();
    uint64_t now = tb_now_us();
    double wait_pct = 0;
    int have_wait = 1;
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        pthread_mutex_lock(&w->lock);
        tb_hist_merge(all, w->stall_hist);
        tb_hist_merge(own, w->own_hist);
        tb_hist_reset(w->stall_hist);
        tb_hist_reset(w->own_hist);
        if (w->schedstat_fd < 0 || now <= w->probe_since_us)
            have_wait = 0;
        else
            wait_pct += 100.0 * (double)w->cpu_wait_us / (double)(now - w->probe_since_us);
        w->cpu_wait_us = 0;
        w->probe_since_us = now;
        pthread_mutex_unlock(&w->lock);
    }
    out->max_us = tb_hist_max(all);
    out->p99_us = tb_hist_percentile(all, 99);
    out->own_max_us = tb_hist_max(own);
    out->own_p99_us = tb_hist_percentile(own, 99);
    out->cpu_wait_pct = have_wait && lg->n_workers > 0 ? wait_pct / lg->n_workers : NAN;
    tb_hist_free(all);
    tb_hist_free(own);
}

static int lg_threads(void *self) { return ((local_lg *)self)->n_workers; }

static int lg_n_ops(void *self, int w) { return ((local_lg *)self)->vt[w]->n_ops; }

static const char *lg_op_name(void *self, int w, int k) { return ((local_lg *)self)->vt[w]->op_names[k]; }

static int lg_op_is_metric(void *self, int w, int k) {
    return (((local_lg *)self)->vt[w]->metric_mask & (1u << k)) != 0;
}

static double lg_mix_target_pct(void *self, int w, int k) {
    local_lg *lg = self;
    return lg->vt[w]->mix_target_pct ? lg->vt[w]->mix_target_pct(lg->cfg[w], k) : -1;
}

static int lg_probe(void *self, int tiles, char *err) {
    local_lg *lg = self;
    for (int w = 0; w < lg->pub.def->n_workloads; w++)
        if (lg->vt[w]->probe && lg->vt[w]->probe(lg->cfg[w], tiles, err) != 0) return -1;
    return 0;
}

static void lg_close(void *self) {
    local_lg *lg = self;
    if (lg->level_running) lg_stop_level(lg, NULL, NULL);
    for (int i = 0; i < lg->n_workers; i++) {
        worker *w = &lg->workers[i];
        if (!w->running) continue;
        send_cmd(w, CMD_QUIT);
        pthread_join(w->th, NULL);
        worker_fini(w);
    }
    free(lg->workers);
    for (int i = 0; i < lg->pub.def->n_workloads; i++)
        if (lg->cfg[i]) lg->vt[i]->cfg_free(lg->cfg[i]);
    free(lg);
}

/*
 * Whether the workers' event loops need libevent's precise timers. They do
 * whenever a latency counts from a timer's due time: think or cycle times
 * (intended starts), per-op minimum cycles, a workload's own timed sends.
 * A precise base (EVENT_BASE_FLAG_PRECISE_TIMER) re-arms a timerfd with a
 * timerfd_settime syscall on every loop turn, about 1.3 µs in a small VM and
 * 0.5 to 0.7 turns per request at max rate: a few percent of a max-rate
 * client's CPU (bench/http). So a tile whose every workload runs at max rate
 * (think_time = 0: each op starts on the previous one's completion, through
 * event_active, no timer) and allows it (vt->coarse_at_max_rate) gets
 * libevent's default timers instead: its CLOCK_MONOTONIC_COARSE clock (4 ms
 * ticks) and millisecond epoll timeouts. Timers then fire up to about 5 ms
 * late; at max rate that touches only op timeouts, the back-off after a
 * failed connect and each user's first op (at its ramp-up offset), and a
 * late first op or back-off still counts as latency (never the reverse: an
 * op never starts before it is due). The stall probe has its own timerfd.
 */
static int needs_precise_timers(const local_lg *lg) { return !tb_worker_max_rate_tile(lg->pub.def); }

/* Frees what worker_init made (any part of it); the thread must have ended. */
static void worker_fini(worker *w) {
    if (w->ticker) event_free(w->ticker);
    if (w->build_ev) event_free(w->build_ev);
    if (w->cmd_ev) event_free(w->cmd_ev);
    if (w->base) event_base_free(w->base);
    if (w->tick_fd >= 0) close(w->tick_fd);
    if (w->cmd_fd >= 0) close(w->cmd_fd);
    if (w->schedstat_fd >= 0) close(w->schedstat_fd);
    tb_hist_free(w->stall_hist);
    tb_hist_free(w->own_hist);
    tb_lg_live_clear(&w->live);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    w->ticker = w->cmd_ev = w->build_ev = NULL;
    w->base = NULL;
    w->tick_fd = w->cmd_fd = w->schedstat_fd = -1;
    w->stall_hist = w->own_hist = NULL;
}

/* Sets up a worker (not its thread): its event base, without libevent's
 * locks (only the worker's thread touches it: commands arrive through
 * cmd_fd), with precise timers or not (needs_precise_timers), the command
 * event and the stall ticker. 0, or -1 with err (everything made is freed). */
static int worker_init(worker *w, int precise, char *err) {
    struct event_config *cfg;
    struct timespec ts;
    struct itimerspec its;
    w->cmd_fd = w->tick_fd = w->schedstat_fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->stall_hist = tb_hist_new();
    w->own_hist = tb_hist_new();
    tb_lg_live_init(&w->live);
    w->probe_since_us = tb_now_us();
    w->cmd_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->cmd_fd < 0 || w->tick_fd < 0) {
        tb_seterr(err, "load generator: %s: %s", w->cmd_fd < 0 ? "eventfd" : "timerfd_create", strerror(errno));
        worker_fini(w);
        return -1;
    }
    cfg = event_config_new();
    if (precise) event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
    w->base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!w->base) {
        tb_seterr(err, "load generator: event_base_new failed");
        worker_fini(w);
        return -1;
    }
    w->cmd_ev = event_new(w->base, w->cmd_fd, EV_READ | EV_PERSIST, on_cmd, w);
    w->ticker = event_new(w->base, w->tick_fd, EV_READ | EV_PERSIST, on_tick, w);
    w->build_ev = evtimer_new(w->base, build_users, w);
    event_add(w->cmd_ev, NULL);
    event_add(w->ticker, NULL);
    /* first expiry one period from now, then every period (absolute, so the
     * due times do not drift with the loop) */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)STALL_TICK_US * 1000;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    its.it_value = ts;
    its.it_interval.tv_sec = 0;
    its.it_interval.tv_nsec = (long)STALL_TICK_US * 1000;
    w->tick_due_us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    if (timerfd_settime(w->tick_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        tb_seterr(err, "load generator: timerfd_settime: %s", strerror(errno));
        worker_fini(w);
        return -1;
    }
    return 0;
}

/* Moves tile's kv users (every workload that can redirect its users: kv)
 * to host:port; their next op goes there (loadgen/kv.c). */
static int lg_kv_switch(void *self, int tile, const char *host, int port, char *err) {
    local_lg *lg = self;
    int n = 0;
    for (int w = 0; w < lg->pub.def->n_workloads; w++) {
        if (!lg->vt[w]->redirect) continue;
        if (lg->vt[w]->redirect(lg->cfg[w], tile, host, port, err) != 0) return -1;
        n++;
    }
    if (n == 0) {
        tb_seterr(err, "the tile has no kv workload to switch to %s:%d", host ? host : "(none)", port);
        return -1;
    }
    return 0;
}

static const tb_loadgen_ops local_ops = {
    .start_level = lg_start_level,
    .collect_phase = lg_collect_phase,
    .take_live = lg_take_live,
    .live = lg_live,
    .stop_level = lg_stop_level,
    .stalls = lg_stalls,
    .cpu_seconds = lg_cpu_seconds,
    .threads = lg_threads,
    .n_ops = lg_n_ops,
    .op_name = lg_op_name,
    .op_is_metric = lg_op_is_metric,
    .mix_target_pct = lg_mix_target_pct,
    .probe = lg_probe,
    .close = lg_close,
    .kv_switch = lg_kv_switch,
};

int tb_loadgen_local_threads(int threads) {
    long n;
    if (threads > 0) return threads;
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int tb_loadgen_local_open(const tb_tiledef *def, const tb_sut_endpoints *ep, int threads, tb_loadgen **out, char *err) {
    local_lg *lg;
    lg = xcalloc(1, sizeof *lg);
    lg->pub.ops = &local_ops;
    lg->pub.self = lg;
    lg->pub.def = def;
    lg->ep = ep;
    for (int i = 0; i < def->n_workloads; i++) {
        lg->vt[i] = tb_workload_find(def->workloads[i].kind);
        if (!lg->vt[i]) {
            tb_seterr(err, "workload %s: unknown kind '%s'", def->workloads[i].name, def->workloads[i].kind);
            lg_close(lg);
            return -1;
        }
        if (lg->vt[i]->configure(&def->workloads[i], ep, &lg->cfg[i], err) != 0) {
            lg_close(lg);
            return -1;
        }
    }
    if (tb_worker_env_read(def, &lg->env, err) != 0) {
        lg_close(lg);
        return -1;
    }
    tb_worker_env_log(&lg->env);
    threads = tb_loadgen_local_threads(threads);
    lg->n_workers = threads;
    lg->workers = xcalloc((size_t)threads, sizeof *lg->workers);
    for (int i = 0; i < threads; i++) {
        worker *w = &lg->workers[i];
        w->lg = lg;
        w->id = i;
        if (worker_init(w, needs_precise_timers(lg), err) != 0) {
            lg_close(lg);
            return -1;
        }
        if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
            tb_seterr(err, "load generator: cannot start worker thread");
            worker_fini(w);
            lg_close(lg);
            return -1;
        }
        w->running = 1;
        w->have_cpu_clock = pthread_getcpuclockid(w->th, &w->cpu_clock) == 0;
    }
    *out = &lg->pub;
    return 0;
}

void tb_loadgen_close(tb_loadgen *lg) {
    if (lg) lg->ops->close(lg->self);
}

int tb_loadgen_kv_switch(tb_loadgen *lg, int tile, const char *host, int port, char *err) {
    if (!lg->ops->kv_switch) {
        tb_seterr(err, "this load generator cannot switch a tile's kv users to another Redis");
        return -1;
    }
    return lg->ops->kv_switch(lg->self, tile, host, port, err);
}

const char *tb_loadgen_local_sched(const tb_tiledef *def, char *err) {
    tb_worker_env e;
    return tb_worker_env_read(def, &e, err) == 0 ? tb_worker_policy_name(e.policy) : NULL;
}

int tb_loadgen_env_check(char *err) {
    tb_worker_env e;
    return tb_worker_env_read(NULL, &e, err);
}

int tb_loadgen_check(const tb_tiledef *def, char *err) {
    /* stand-ins: configure() checks that an endpoint is present, not that it answers */
    tb_sut_endpoints ep = {0};
    int rc = 0;
    if (!tb_loadgen_local_sched(def, err)) return -1;
    if (def->has_sut) tb_endpoints_copy(&ep, &def->sut);
    if (!tb_ep_has(ep.pg_conninfo)) tb_endpoints_set(&ep.pg_conninfo, "host=127.0.0.1 dbname=check");
    if (!tb_ep_has(ep.redis_host)) {
        tb_endpoints_set(&ep.redis_host, "127.0.0.1");
        ep.redis_port = 6379;
    }
    if (!tb_ep_has(ep.imap_host)) {
        tb_endpoints_set(&ep.imap_host, "127.0.0.1");
        ep.imap_port = 143;
    }
    if (!tb_ep_has(ep.lmtp_host) && !tb_ep_has(ep.smtp_host)) {
        tb_endpoints_set(&ep.lmtp_host, "127.0.0.1");
        ep.lmtp_port = 24;
    }
    if (!tb_ep_has(ep.mail_password)) tb_endpoints_set(&ep.mail_password, "x");
    if (!tb_ep_has(ep.web_url) && ep.n_web_tile == 0) tb_endpoints_set(&ep.web_url, "http://127.0.0.1:80");
    for (int i = 0; i < def->n_workloads && rc == 0; i++) {
        const tb_workload_vt *vt = tb_workload_find(def->workloads[i].kind);
        void *cfg = NULL;
        if (!vt) {
            tb_seterr(err, "workload %s: unknown kind '%s'", def->workloads[i].name, def->workloads[i].kind);
            rc = -1;
        } else if (vt->configure(&def->workloads[i], &ep, &cfg, err) != 0) {
            rc = -1;
        } else {
            vt->cfg_free(cfg);
        }
    }
    tb_endpoints_free(&ep);
    return rc;
}
