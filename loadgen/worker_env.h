/*
 * worker_env.h: how the local load generator's worker threads run, from the
 * tile and the environment: their nice value (TB_WORKER_NICE), their
 * spin-then-block window (TB_WORKER_SPIN_US) and their scheduling policy
 * (TB_WORKER_SCHED). Read once when the load generator opens, applied by
 * each worker thread to itself.
 */
#ifndef TB_LOADGEN_WORKER_ENV_H
#define TB_LOADGEN_WORKER_ENV_H

#include <stdint.h>

#include "tiles/tiledef.h"

typedef struct tb_worker_env {
    int nice_set, nice; /* TB_WORKER_NICE: the workers' nice value, when given */
    uint64_t spin_us;   /* TB_WORKER_SPIN_US: longest spin before blocking; 0 never spins */
    int policy;         /* the workers' scheduling policy: SCHED_BATCH, SCHED_OTHER or the one they inherit */
    int sched_set;      /* TB_WORKER_SCHED was batch or other (not auto) */
    int apply;          /* each worker sets policy itself (it does not inherit it) */
} tb_worker_env;

/* Whether every workload of def runs at max rate (think_time = 0) and is of
 * a kind that allows libevent's coarse timers there (vt->coarse_at_max_rate,
 * no minimum cycle): such a tile's workers get coarse timers and, unless
 * TB_WORKER_SCHED says otherwise, SCHED_BATCH. */
int tb_worker_max_rate_tile(const tb_tiledef *def);
/* Reads the environment into *out for def's workers (the policy the calling
 * thread's workers are to run), or only checks it when def is NULL (no
 * policy is chosen). Logs nothing. 0, or -1 with err naming the variable
 * that is bad. */
int tb_worker_env_read(const tb_tiledef *def, tb_worker_env *out, char *err);
/* Says, in the log, what was asked for: the nice value, and the policy when
 * TB_WORKER_SCHED was set (auto's choice is stored with the run). */
void tb_worker_env_log(const tb_worker_env *e);
/* Gives the calling worker thread (number id) e's policy when it is to set
 * it, then its nice value; what it cannot set is a warning, and the thread
 * runs on with its own (leaving SCHED_IDLE, for one, needs CAP_SYS_NICE). */
void tb_worker_env_apply(const tb_worker_env *e, int id);
/* "SCHED_BATCH", "SCHED_OTHER", ... for a policy; "unknown" for another. */
const char *tb_worker_policy_name(int policy);

#endif
