/*
 * parts.c: a load generator made of parts (agents on other hosts,
 * agent/remote.h): who they are, the placement of each level's tiles, and
 * each part's figures and health per phase, stored beside the merged ones.
 * A local load generator has no parts, and none of this shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/run_ctx.h"

/* A part's loop stall over this warns, naming it (as for the whole). */
#define PART_STALL_WARN_US 10000

/* The parts as of the phase collected last; *n of them; caller frees. */
static tb_lg_part *get_parts(const run_ctx *c, int *n) {
    tb_lg_part *p;
    *n = 0;
    if (!c->lg || !c->lg->ops->parts) return NULL;
    p = xcalloc(TB_VALIDITY_MAX_PARTS, sizeof *p);
    *n = c->lg->ops->parts(c->lg->self, p, TB_VALIDITY_MAX_PARTS);
    return p;
}

/* Agents on other hosts cannot reach a SUT on this one's loopback. */
static void warn_loopback(run_ctx *c, const tb_lg_part *p, int n) {
    char host[128] = "", msg[512];
    gethostname(host, sizeof host - 1);
    if (!tb_coord_sut_is_local(&c->ep)) return;
    for (int i = 0; i < n; i++) {
        if (strcmp(p[i].host, host) == 0) continue;
        snprintf(msg, sizeof msg,
                 "agent %s runs on host %s, but the SUT's endpoints are on this host's loopback (127.0.0.1): "
                 "it cannot reach them unless it shares this host's network; start the SUT with `sut up "
                 "--listen ADDR` and give its [sut] section (docs/agents.md, \"Real client hosts\")",
                 p[i].name, p[i].host);
        tb_coord_say(c, "warning", TB_RUN_MSG_WARNING, msg);
        return;
    }
}

/* The parts and an empty buffer for an event about them; NULL (nothing to
 * say) for a load generator without parts. */
static tb_lg_part *parts_for_event(const run_ctx *c, int *n, tb_buf *b) {
    tb_lg_part *p = get_parts(c, n);
    if (!*n) {
        free(p);
        return NULL;
    }
    tb_buf_init(b, 0);
    return p;
}

void tb_coord_note_agents(run_ctx *c) {
    int n;
    tb_buf b;
    tb_lg_part *p = parts_for_event(c, &n, &b);
    if (!p) return;
    tb_buf_putf(&b, "load generator: %d agent%s:", n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++)
        tb_buf_putf(&b, "%s %s (host %s, %d thread%s)", i ? "," : "", p[i].name, p[i].host, p[i].threads,
                    p[i].threads == 1 ? "" : "s");
    tb_coord_say(c, "info", TB_RUN_MSG_INFO, tb_buf_str(&b));
    tb_buf_free(&b);
    warn_loopback(c, p, n);
    free(p);
}

void tb_coord_note_placement(run_ctx *c, int tiles) {
    int n;
    tb_buf b;
    tb_lg_part *p = parts_for_event(c, &n, &b);
    if (!p) return;
    tb_buf_putf(&b, "%d tiles placed:", tiles);
    for (int i = 0; i < n; i++) {
        if (p[i].tile_lo > 0)
            tb_buf_putf(&b, "%s %s tiles %d..%d", i ? ";" : "", p[i].name, p[i].tile_lo, p[i].tile_hi);
        else
            tb_buf_putf(&b, "%s %s none%s", i ? ";" : "", p[i].name, p[i].lost_wall_us ? " (lost)" : "");
        if (p[i].clock_known)
            tb_buf_putf(&b, " (clock offset known to +/- %.2f ms)", (double)p[i].clock_bound_us / 1000.0);
    }
    tb_coord_note(c, "info", tb_buf_str(&b));
    tb_buf_free(&b);
    free(p);
}

tb_agent_result *tb_coord_phase_agents(run_ctx *c, tb_validity_input *vin, int *n_out) {
    int n;
    tb_lg_part *p = get_parts(c, &n);
    tb_agent_result *a = n ? xcalloc((size_t)n, sizeof *a) : NULL;
    for (int i = 0; i < n; i++) {
        a[i].name = xstrdup(p[i].name);
        a[i].host = xstrdup(p[i].host);
        a[i].tile_lo = p[i].tile_lo;
        a[i].tile_hi = p[i].tile_hi;
        a[i].threads = p[i].threads;
        a[i].users = p[i].users;
        a[i].ops = p[i].ops;
        a[i].errors = p[i].errors;
        a[i].cpu_s = p[i].cpu_s;
        a[i].stall_max_us = p[i].stalls.max_us;
        a[i].stall_p99_us = p[i].stalls.p99_us;
        a[i].clock_known = p[i].clock_known;
        a[i].clock_offset_us = p[i].clock_offset_us;
        a[i].clock_bound_us = p[i].clock_bound_us;
        a[i].lost_wall_us = p[i].lost_wall_us;
        if (p[i].tile_lo > 0 && vin->n_parts < TB_VALIDITY_MAX_PARTS)
            vin->parts[vin->n_parts++] = (tb_validity_part){.name = a[i].name,
                                                            .cpu_s = p[i].cpu_s,
                                                            .threads = p[i].threads,
                                                            .clock_known = p[i].clock_known,
                                                            .clock_bound_us = p[i].clock_bound_us};
    }
    vin->lg_fault = c->lg->ops->level_fault ? c->lg->ops->level_fault(c->lg->self) : NULL;
    free(p);
    *n_out = n;
    return a;
}

void tb_coord_free_agents(tb_agent_result *a, int n) {
    for (int i = 0; i < n; i++) {
        free((char *)a[i].name);
        free((char *)a[i].host);
    }
    free(a);
}

void tb_coord_note_parts_phase(run_ctx *c, int tiles, int phase, uint64_t merged_us) {
    int n, used = 0;
    tb_lg_part *p = get_parts(c, &n);
    char msg[512];
    for (int i = 0; i < n; i++)
        used += p[i].tile_lo > 0;
    if (n) {
        snprintf(msg, sizeof msg, "%d tiles phase %d: the results of %d agent%s merged %.1f ms after the phase's end",
                 tiles, phase, used, used == 1 ? "" : "s", (double)merged_us / 1000.0);
        tb_coord_note(c, "info", msg);
    }
    for (int i = 0; i < n; i++) {
        if (p[i].tile_lo <= 0 || p[i].stalls.max_us <= PART_STALL_WARN_US) continue;
        snprintf(msg, sizeof msg,
                 "%d tiles phase %d: agent %s's load generator loop stalled up to %.1f ms (over %d ms; own work "
                 "%.1f ms): ops due then started late, and their latency includes it",
                 tiles, phase, p[i].name, (double)p[i].stalls.max_us / 1000.0, PART_STALL_WARN_US / 1000,
                 (double)p[i].stalls.own_max_us / 1000.0);
        tb_coord_say(c, "warning", TB_RUN_MSG_PHASE_STALL, msg);
    }
    free(p);
}
