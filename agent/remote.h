/*
 * remote.h: the load generator made of agents on other hosts, as the
 * coordinator sees it: a tb_loadgen like the local one (loadgen/loadgen.h).
 * It waits for the agents, holds each by a lease it renews every second,
 * deals each level's tiles to them whole and in proportion to their
 * threads, sends the plan in broker time, and merges what they send back
 * exactly (histogram counts add). docs/agents.md tells the whole story.
 */
#ifndef TB_AGENT_REMOTE_H
#define TB_AGENT_REMOTE_H

#include <signal.h>

#include "loadgen/loadgen.h"

#define TB_REMOTE_MAX_AGENTS      256
#define TB_REMOTE_WAIT_DEFAULT_US 60000000 /* how long a run waits for its agents by default */

typedef struct tb_remote_opts {
    const char *broker_uri; /* secret: never shown as given */
    int agents;             /* how many to wait for */
    int n_names;            /* > 0: exactly these agents */
    const char *names[TB_REMOTE_MAX_AGENTS];
    uint64_t wait_us; /* for the agents to register; 0 = TB_REMOTE_WAIT_DEFAULT_US */
    volatile sig_atomic_t *stop;
} tb_remote_opts;

/*
 * Opens the remote load generator: connects to the broker, waits for the
 * agents, claims them, hands each the tile file and the SUT's endpoints
 * (secrets included: only through the broker), and waits until each has
 * configured its workloads. def and ep must outlive it.
 * 0; -1 with err for bad options or a refused broker (exit 2); -2 with err
 * naming the missing or refusing agents (exit 3).
 */
int tb_loadgen_remote_open(const tb_tiledef *def, const tb_sut_endpoints *ep, const tb_remote_opts *o, tb_loadgen **out,
                           char *err) TB_WUR;

/* Deals tiles over n parts in proportion to weights, whole and
 * contiguous: part i gets lo[i]..hi[i] (0/0 when none). Largest remainder
 * first, ties to the lower index. */
void tb_remote_deal(int tiles, int n, const int *weights, int *lo, int *hi);

#endif
