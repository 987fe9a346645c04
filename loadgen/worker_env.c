/*
 * worker_env.c: the workers' nice value, spin window and scheduling policy
 * (worker_env.h).
 *
 * The policy. Linux does not let a woken SCHED_BATCH thread preempt the one
 * running on its CPU: the server thread that has just written a reply goes on
 * with its other connections instead of handing its CPU to the client that
 * reads it, and the client, once it runs, finds more replies per wake-up. At
 * max rate that cut tilebench's CPU per request against nginx by about 8%,
 * and nginx's by about 5% (bench/http). But a woken batch thread may wait for
 * a tick or for the CPU's other work to block, which would delay an op due at
 * a timer: so TB_WORKER_SCHED=auto (the default) gives SCHED_BATCH only to a
 * tile where nothing counts from a timer's due time, the same test as
 * libevent's coarse timers (tb_worker_max_rate_tile), and only to threads
 * that would run SCHED_OTHER: a policy someone chose for the whole process
 * (chrt -i, a real-time one) is kept. batch and other are set in each worker
 * whatever the process runs, as far as the kernel lets it (leaving SCHED_IDLE
 * needs CAP_SYS_NICE).
 */
#define _GNU_SOURCE /* SCHED_BATCH, SCHED_IDLE */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "loadgen/worker_env.h"
#include "loadgen/workload.h"

int tb_worker_max_rate_tile(const tb_tiledef *def) {
    for (int i = 0; i < def->n_workloads; i++) {
        const tb_workload_vt *vt = tb_workload_find(def->workloads[i].kind);
        if (!vt || !vt->coarse_at_max_rate || def->workloads[i].think_us > 0 || vt->min_cycle_us) return 0;
    }
    return 1;
}

/* Reads the integer environment variable name into *out: 1; 0 when unset or
 * empty; -1 with err naming it when it is not an integer in lo..hi (hint is
 * appended to the message). */
static int env_int(const char *name, long lo, long hi, const char *hint, long *out, char *err) {
    const char *v = getenv(name);
    char *e;
    if (!v || !*v) return 0;
    errno = 0;
    *out = strtol(v, &e, 10);
    if (*e || errno || *out < lo || *out > hi) {
        tb_seterr(err, "%s '%s': expected an integer %ld..%ld%s", name, v, lo, hi, hint);
        return -1;
    }
    return 1;
}

/* The policy a thread that the calling one creates starts with: the
 * caller's, except that SCHED_RESET_ON_FORK (chrt -R) gives it SCHED_OTHER
 * in place of a real-time one. */
static int inherited_policy(void) {
    int p = sched_getscheduler(0), reset = p >= 0 && (p & SCHED_RESET_ON_FORK);
    p = p < 0 ? SCHED_OTHER : p & ~SCHED_RESET_ON_FORK;
    return reset && (p == SCHED_FIFO || p == SCHED_RR) ? SCHED_OTHER : p;
}

static int read_policy(const tb_tiledef *def, tb_worker_env *out, char *err) {
    const char *v = getenv("TB_WORKER_SCHED");
    int inherited = inherited_policy();
    if (!v || !*v || strcmp(v, "auto") == 0) {
        /* auto: only a thread that would run SCHED_OTHER is given SCHED_BATCH */
        out->apply = def && inherited == SCHED_OTHER && tb_worker_max_rate_tile(def);
        out->policy = out->apply ? SCHED_BATCH : inherited;
        return 0;
    }
    if (strcmp(v, "batch") != 0 && strcmp(v, "other") != 0) {
        tb_seterr(err, "TB_WORKER_SCHED '%s': expected auto, batch or other", v);
        return -1;
    }
    out->sched_set = out->apply = 1;
    out->policy = v[0] == 'b' ? SCHED_BATCH : SCHED_OTHER;
    return 0;
}

int tb_worker_env_read(const tb_tiledef *def, tb_worker_env *out, char *err) {
    long n = 0;
    int r;
    memset(out, 0, sizeof *out);
    r = env_int("TB_WORKER_NICE", -20, 19, "", &n, err);
    if (r < 0) return -1;
    out->nice_set = r;
    out->nice = (int)n;
    n = 0; /* default 0: the workers never spin (worker.c, run_loop) */
    if (env_int("TB_WORKER_SPIN_US", 0, 1000, " (microseconds; 0 never spins)", &n, err) < 0) return -1;
    out->spin_us = (uint64_t)n;
    return read_policy(def, out, err);
}

void tb_worker_env_log(const tb_worker_env *e) {
    if (e->nice_set)
        tb_log(TB_LOG_INFO,
               "load generator workers run at nice %d (TB_WORKER_NICE): below 0 they take CPU time from every "
               "other process on their cores, the SUT's included",
               e->nice);
    if (e->sched_set)
        tb_log(TB_LOG_INFO, "load generator workers are to run %s (TB_WORKER_SCHED)", tb_worker_policy_name(e->policy));
}

void tb_worker_env_apply(const tb_worker_env *e, int id) {
    if (e->apply && (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != e->policy) {
        /* keeps the thread's nice value; from SCHED_OTHER or SCHED_BATCH it needs no privilege */
        struct sched_param sp = {0};
        int r = pthread_setschedparam(pthread_self(), e->policy, &sp);
        if (r != 0)
            tb_log(TB_LOG_WARN, "load generator worker %d: cannot run %s (TB_WORKER_SCHED): %s", id,
                   tb_worker_policy_name(e->policy), strerror(r));
    }
    /* Linux keeps a nice value per thread: PRIO_PROCESS 0 is this thread */
    if (e->nice_set && setpriority(PRIO_PROCESS, 0, e->nice) != 0)
        tb_log(TB_LOG_WARN,
               "load generator worker %d: cannot set nice %d (TB_WORKER_NICE): %s; it runs at its default "
               "priority",
               id, e->nice, strerror(errno));
}

const char *tb_worker_policy_name(int policy) {
    switch (policy) {
    case SCHED_OTHER: return "SCHED_OTHER";
    case SCHED_BATCH: return "SCHED_BATCH";
    case SCHED_IDLE: return "SCHED_IDLE";
    case SCHED_FIFO: return "SCHED_FIFO";
    case SCHED_RR: return "SCHED_RR";
    default: return "unknown";
    }
}
