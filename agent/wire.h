/*
 * wire.h: what the coordinator and its load-generator agents say to each
 * other through the broker (docs/agents.md, "The protocol"). Every message
 * is one Redis stream entry whose fields are a type, the sender and a JSON
 * body, plus a binary statistics field for phase results
 * (tb_lg_stats_encode). This file turns the body's parts into JSON and
 * back; agent.c and remote.c send and read the entries.
 *
 * Keys, all under the prefix "tb:":
 *   tb:agents          set of every agent name that ever registered
 *   tb:agent:NAME      the agent's registration (JSON), SET with a 3 s
 *                      expiry and renewed every second: its heartbeat
 *   tb:lease:NAME      the coordinator that holds the agent (its id),
 *                      SET NX with a 5 s expiry and renewed every second:
 *                      the agent's dead man's switch
 *   tb:cmd:NAME        stream coordinator -> agent (consumer group "agent")
 *   tb:res:COORD       stream agents -> coordinator (consumer group "coord")
 */
#ifndef TB_AGENT_WIRE_H
#define TB_AGENT_WIRE_H

#include <jansson.h>
#include <stdint.h>

#include "loadgen/loadgen.h"
#include "tiles/endpoints.h"

/* Bumped whenever a message changes shape; coordinator and agents must agree. */
#define TB_AGENT_PROTOCOL     1

#define TB_AGENT_HEARTBEAT_MS 1000 /* an agent renews tb:agent:NAME this often */
#define TB_AGENT_ALIVE_MS     3000 /* ... which lives this long: 3 s of silence is a lost agent */
#define TB_AGENT_LEASE_MS     5000 /* a coordinator's hold on an agent lives this long unrenewed */
#define TB_AGENT_NAME_MAX     64
#define TB_AGENT_MAX_THREADS  (1 << 20) /* the most threads an agent may say it runs */

/* What an agent says about itself when it registers (and every heartbeat). */
typedef struct tb_agent_info {
    char name[TB_AGENT_NAME_MAX];
    char host[128];
    int cores;   /* online CPUs */
    int threads; /* load generator threads it runs (--threads, else cores) */
    char version[32];
    int protocol;
    char state[16];  /* "idle" or "busy" */
    char coord[128]; /* the coordinator holding it, "" when idle */
} tb_agent_info;

json_t *tb_wire_info_json(const tb_agent_info *a);
/* 0, or -1 with err naming the bad field. */
int tb_wire_info_parse(const char *text, size_t len, tb_agent_info *a, char *err) TB_WUR;

/* The SUT's endpoints, secrets included: they travel only through the broker. */
json_t *tb_wire_endpoints_json(const tb_sut_endpoints *ep);
int tb_wire_endpoints_parse(const json_t *j, tb_sut_endpoints *ep, char *err) TB_WUR;

/* A level's plan in broker time: phase edges as broker µs (Redis TIME). */
typedef struct tb_wire_plan {
    int seq; /* the coordinator's level counter: replies name it */
    int tiles, tile_lo, tile_hi;
    int64_t start_b;
    uint64_t ramp_up_us;
    unsigned workload_mask; /* tb_level_plan.workload_mask: 0 runs every workload */
    int n_phases;
    int64_t phase_start_b[TB_MAX_PHASES], phase_end_b[TB_MAX_PHASES];
} tb_wire_plan;

json_t *tb_wire_plan_json(const tb_wire_plan *p);
int tb_wire_plan_parse(const json_t *j, tb_wire_plan *p, char *err) TB_WUR;

/* A phase's health on one agent: its loop stalls and CPU. */
json_t *tb_wire_stalls_json(const tb_lg_stalls *s);
void tb_wire_stalls_parse(const json_t *j, tb_lg_stalls *s);

/* The broker keys of an agent. */
void tb_wire_key(char *out, size_t len, const char *kind, const char *name);

/* The tile file's text as an agent gets it (caller frees): without its
 * [sut] section, whose endpoints travel apart (tb_wire_endpoints_json) and
 * whose files (mail_password_file) exist only on the coordinator's host;
 * its lines are kept as empty lines, so line numbers stay the file's. */
char *tb_wire_tile_text(const char *text);

/* 1 when name is a usable agent name: 1..63 of [A-Za-z0-9._-]. */
int tb_wire_name_ok(const char *name);

#endif
