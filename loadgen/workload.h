/*
 * workload.h: what a workload (oltp, kv, later web and mail) implements, and
 * the services the generic user driver (loadgen/worker.c) gives it.
 *
 * The driver owns timing: it decides when each user's next op is due (its
 * intended start), measures latency from that moment (so a stalled server or
 * a late event loop shows up as latency, not as fewer samples: no coordinated
 * omission, as wrk2 and pgbench --rate), enforces op timeouts, and gates
 * recording to steady state. The workload only knows its protocol: it picks
 * the next op from its mix, runs it asynchronously on the worker's
 * event_base, and reports completion.
 */
#ifndef TB_LOADGEN_WORKLOAD_H
#define TB_LOADGEN_WORKLOAD_H

#include <stdint.h>

#include "common/tb_common.h"
#include "tiles/endpoints.h"
#include "tiles/kinds.h"
#include "tiles/tiledef.h"

struct event_base;

#define TB_MAX_OPS 16 /* ops per workload kind */

/* How an op ended. Errors are counted by class. */
typedef enum {
    TB_OP_OK = 0,
    TB_OP_ERR_CONNECT, /* could not connect */
    TB_OP_ERR_IO,      /* connection lost, read/write failed */
    TB_OP_ERR_TIMEOUT, /* no answer within the op timeout */
    TB_OP_ERR_SERVER,  /* the server answered with an error */
    TB_OP_ERR_CONTENT, /* the answer was not what was expected */
    TB_OP_NSTATUS
} tb_op_status;

/* The driver's handle on one virtual user (opaque to the workload). */
typedef struct tb_user_ctx tb_user_ctx;

/* Reports that the op started by op_start finished. Call exactly once per
 * op_start, from the worker thread, never from inside op_start itself
 * (defer with a zero timer if the result is known immediately). */
void tb_user_op_done(tb_user_ctx *u, tb_op_status st);
/* The same, with the op's end already read from tb_now_us by the caller
 * (the moment its answer was in), so the clock is not read twice. */
void tb_user_op_done_at(tb_user_ctx *u, tb_op_status st, uint64_t end_us);

/* Like tb_user_op_done, but on the next turn of the event loop: for results
 * known at once (a failed connect), including from inside op_start. A
 * timeout or op_cancel in between drops it. */
void tb_user_op_done_soon(tb_user_ctx *u, tb_op_status st);

/* Pushes the next op's intended start back by us on top of its think time:
 * a back-off after failed connects, so a down server is not hammered. The
 * extra wait is the workload's choice, so it is not counted as latency. */
void tb_user_delay_next(tb_user_ctx *u, uint64_t us);

/* Records a step of a multi-step op (an order's Login, Browse, Purchase) or
 * an extra result of one op (a reply of a pipelined batch): the corrected
 * latency is end - due_us, the uncorrected end - sent_us (µs), and due_us
 * places it in a phase (Faban's rule). The first step of an op is due at
 * the op's intended start (tb_user_intended_us), so an op that starts late
 * shows it in its first step too; a later step is due when the previous
 * step ended. sent_us is when the step itself went out. */
void tb_user_record_step(tb_user_ctx *u, int op, uint64_t due_us, uint64_t sent_us, uint64_t end_us, tb_op_status st);

struct event_base *tb_user_base(tb_user_ctx *u);
/* When the op in flight was due (monotonic µs): the due time for tb_user_record_step
 * of extra results of one op, e.g. each reply of a pipelined batch. */
uint64_t tb_user_intended_us(const tb_user_ctx *u);
/* When the op in flight actually started (op_start was called), monotonic µs. */
uint64_t tb_user_sent_us(const tb_user_ctx *u);
int tb_user_tile(const tb_user_ctx *u);  /* 1-based tile index */
int tb_user_index(const tb_user_ctx *u); /* 0-based user index within its tile and workload */
/* The user's own PRNG (xoshiro-style, seeded per user): each draw independent. */
uint64_t tb_user_rand(tb_user_ctx *u);
double tb_user_rand01(tb_user_ctx *u);                  /* [0,1) */
int tb_user_rand_range(tb_user_ctx *u, int lo, int hi); /* uniform in [lo,hi] */

typedef struct tb_workload_vt {
    const char *kind;            /* "oltp", "kv": a kind of the tile model's catalog (tiles/kinds.h) */
    int n_ops;                   /* the catalog's n_ops for the kind */
    const char *const *op_names; /* the catalog's op_names for the kind (one list), e.g. "Order" */
    unsigned metric_mask;        /* bit i set: op i counts toward throughput */
    int sockets_per_user;        /* sockets one user holds at most (for the open-files
                                    check of `run`); 0 = 2 */
    /* Parses the workload's own keys from def->params (errors name file:line
     * and key) and checks the SUT endpoints it needs. *cfg owned by caller,
     * freed with cfg_free. 0 or -1 with err. */
    int (*configure)(const tb_workload_def *def, const tb_sut_endpoints *ep, void **cfg, char *err);
    void (*cfg_free)(void *cfg);
    /* A new user's state. Connects lazily (first op). Never fails: problems
     * surface as op errors. */
    void *(*user_new)(const void *cfg, tb_user_ctx *u);
    /* Picks the next primary op (index) from the workload's mix. */
    int (*next_op)(void *st);
    /* Starts op asynchronously; completion via tb_user_op_done. */
    void (*op_start)(void *st, int op);
    /* Abandons the op in flight (timeout): drop the connection so no late
     * reply is mistaken for the next op's. Must not call tb_user_op_done. */
    void (*op_cancel)(void *st);
    /* Frees the state, closing connections, without calling back. */
    void (*user_free)(void *st);
    /* Optional: checks once, before a level starts, that the SUT answers and
     * holds data for tiles 1..tiles (a "SUT ready" check), and where it can
     * tell, that the server takes the connections tiles x users will open.
     * 0, or -1 with err naming the endpoint and why ("oltp: host=... :
     * password authentication failed"). */
    int (*probe)(const void *cfg, int tiles, char *err);
    /* Optional (NULL = no mix rule possible): op's target share in % of the
     * workload's primary ops, from its configuration, for Faban's mix
     * deviation rule; -1 when op is not part of the mix. */
    double (*mix_target_pct)(const void *cfg, int op);
    /* Optional: the least think or cycle time (µs) before op may start,
     * from its configuration (Olio: AddPerson 2 s, AddEvent 3 s). When set,
     * the driver picks the next op as soon as the previous one ends, draws
     * the think time, and waits max(draw, this). 0 = no minimum. */
    uint64_t (*min_cycle_us)(const void *cfg, int op);
    /* 1: the workload arms no timer that a latency counts from (only the
     * driver does), so a tile whose workloads all run at max rate
     * (think_time = 0) and all allow it runs on event loops with libevent's
     * coarse timers, saving a syscall per loop turn (loadgen/worker.c,
     * needs_precise_timers). 0 keeps precise timers always. */
    int coarse_at_max_rate;
    /* Optional (NULL: it cannot): moves tile's users (1-based) to the server
     * at host:port while they run: each user's next op connects there, an op
     * in flight finishes where it began. Thread-safe: called from any thread
     * while the workers run users (an infrastructure `migrate` op, through
     * tb_loadgen_ops.kv_switch). Costs the users one relaxed atomic load per
     * op. 0, or -1 with err. */
    int (*redirect)(void *cfg, int tile, const char *host, int port, char *err);
} tb_workload_vt;

/* The workload kinds compiled in; NULL when kind is unknown. There is one
 * for every kind of the tile model's catalog (tiles/kinds.h). */
const tb_workload_vt *tb_workload_find(const char *kind);
/* The number of workloads compiled in, and workload i (0-based; NULL out of
 * range): for the test that holds them to the catalog. */
int tb_workload_count(void);
const tb_workload_vt *tb_workload_at(int i);

/* Helpers for configure(): read a kind-specific key (dflt when absent) with
 * "file:line: [workload.NAME] key: why" errors. 0 or -1. */
int tb_wl_param_duration(const tb_workload_def *w, const char *key, uint64_t dflt_us, uint64_t *out_us,
                         char *err) TB_WUR;
int tb_wl_param_u64(const tb_workload_def *w, const char *key, uint64_t dflt, uint64_t *out, char *err) TB_WUR;
int tb_wl_param_double(const tb_workload_def *w, const char *key, double dflt, double *out, char *err) TB_WUR;

/* For a value configure() finds out of range: sets err to
 * "file:line: [workload.NAME] key: 'VALUE': want" at the key's own line
 * ("(default)" and the section's line when the key is absent). Returns -1. */
int tb_wl_param_bad(const tb_workload_def *w, const char *key, const char *want, char *err);

/* Rejects any kind-specific key not in the NULL-terminated known list:
 * "file:line: [workload.oltp] colour: unknown key (known: a, b)". 0 or -1. */
int tb_wl_check_keys(const tb_workload_def *w, const char *const *known, char *err) TB_WUR;

#endif
