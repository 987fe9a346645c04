/*
 * agent.h: `tilebench agent`: a load generator on a client host, driven by
 * a coordinator through the broker (docs/agents.md). It registers, renews
 * its heartbeat every second, and serves run after run and level after
 * level with the same local load generator the coordinator uses on one
 * host (loadgen/worker.c), until it is stopped.
 */
#ifndef TB_AGENT_AGENT_H
#define TB_AGENT_AGENT_H

#include <signal.h>

#include "common/tb_common.h"

typedef struct tb_agent_opts {
    const char *broker_uri; /* secret: never shown as given */
    const char *name;       /* NULL: the host name */
    int threads;            /* load generator threads, 0 = online CPUs */
    volatile sig_atomic_t *stop;
    /* What happens, for the console: level TB_LOG_INFO/WARN/ERROR. */
    void (*say)(void *arg, int level, const char *msg);
    void *arg;
} tb_agent_opts;

/* Serves until *stop is set. A process exit code: 0 stopped, 2 bad options
 * or the broker refused us at the start, 3 a fatal error; err says why. */
int tb_agent_serve(const tb_agent_opts *o, char *err);

#endif
