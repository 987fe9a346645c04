/*
 * remote_int.h: the remote load generator's state, shared by remote.c (the
 * tb_loadgen methods, on the coordinator's thread) and remote_link.c (the
 * link thread: leases, heartbeats, the results stream). Not for other files.
 */
#ifndef TB_AGENT_REMOTE_INT_H
#define TB_AGENT_REMOTE_INT_H

#include <pthread.h>

#include "agent/remote.h"
#include "agent/stream.h"
#include "agent/wire.h"
#include "broker/broker.h"

typedef struct ragent {
    tb_agent_info info;
    char k_cmd[128], k_lease[128], k_agent[128];
    int lo, hi; /* this level's tiles; 0/0: none */
    /* what it said this level (seq) */
    int ready, started, stopped, probed, probe_ok;
    int64_t offset_us;
    uint64_t bound_us;
    int users;
    tb_lg_stats *phase[TB_MAX_PHASES];
    tb_lg_stalls ph_stalls[TB_MAX_PHASES];
    double ph_cpu[TB_MAX_PHASES]; /* CPU seconds since the level's start, at the phase's end */
    uint64_t ph_ops[TB_MAX_PHASES], ph_errs[TB_MAX_PHASES];
    int have_phase[TB_MAX_PHASES];
    tb_lg_stalls ramp;
    int have_ramp;
    double cpu_last; /* CPU seconds since the level's start, latest */
    tb_lg_stats *all;
    uint64_t live_ops, live_errs;
    char error[TB_ERR_LEN];
    uint64_t last_seen_us; /* its heartbeat key or a message, on our clock */
    int64_t lost_wall_us;  /* 0: alive */
    /* the answer to the last kv switch it was sent (rm_kv_switch) */
    unsigned kv_done; /* its id; 0: none yet */
    int kv_ok;
    char kv_error[TB_ERR_LEN];
} ragent;

typedef struct remote {
    tb_loadgen pub;
    const tb_remote_opts *o;
    const tb_sut_endpoints *ep;
    tb_broker_uri uri;
    tb_broker *cmd; /* the coordinator's thread */
    tb_broker *rd;  /* the link thread */
    pthread_t th;
    int th_on;
    int quit;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char coord[128], res_key[192];
    uint64_t last_ms, last_seq; /* the last results entry filed: a replayed one is ignored */
    int n;
    ragent *ag;
    /* the ops of every workload, from the first agent ready */
    int n_ops[TB_MAX_WORKLOADS];
    char op_name[TB_MAX_WORKLOADS][TB_MAX_OPS][48];
    int metric[TB_MAX_WORKLOADS][TB_MAX_OPS];
    double mix[TB_MAX_WORKLOADS][TB_MAX_OPS];
    /* the level */
    int seq, level_on, collected; /* collected: the phase collected last, -1 none */
    int stalls_pending;           /* a phase was collected since the last stalls() */
    int want_phase;               /* the phase rm_collect_phase waits for */
    int ramp_given;
    tb_level_plan plan;
    double cpu_base; /* CPU seconds of the levels before this one */
    char fault[1024];
    /* kv switches (rm_kv_switch, from the infrastructure runner's threads):
     * one at a time under kv_mu, each on a broker connection of its own */
    pthread_mutex_t kv_mu;
    unsigned kv_seq;  /* ids given so far */
    int kv_agent;     /* the agent whose answer is awaited */
    unsigned kv_want; /* ... and the id */
} remote;

/* remote_open.c: waits for and claims the agents (0, -1 with err, -2 with
 * err naming the missing ones); hands each the run (0, or -2 with err). */
int tb_remote_gather(remote *r, char *err);
int tb_remote_hand_out(remote *r, char *err);

/* remote_link.c */
int tb_remote_link_start(remote *r, char *err);
void tb_remote_link_stop(remote *r);
/* Adds a reason to the level's fault (under r->mu). */
void tb_remote_fault(remote *r, const char *fmt, ...) TB_PRINTF(2, 3);
/* Lease: claim (SET NX), renew (compare and expire), release (compare and delete). */
int tb_remote_claim(tb_broker *b, const char *key, const char *coord, char *err);
int tb_remote_renew(tb_broker *b, const char *key, const char *coord, char *err);
void tb_remote_release(tb_broker *b, const char *key, const char *coord);

#endif
