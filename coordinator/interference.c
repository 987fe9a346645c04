/*
 * interference.c: consolidation interference (--interference), after the
 * Xen consolidation study's method: each workload of the tile runs alone,
 * then all of them together, so a report can show what each loses to its
 * neighbours (results/report_interference.c). For each load level of N
 * tiles, every workload in turn runs alone in each of the N tiles (the same
 * users, the same stages; the load generator starts no user of the others,
 * tb_level_plan.workload_mask), then the whole tile runs. Each alone level
 * is an ordinary stored level labelled with its workload (levels.alone);
 * only the whole tile's verdict counts toward the saturation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/run_ctx.h"

int tb_coord_levels_per_level(const tb_run_opts *o) { return o->interference ? o->def->n_workloads + 1 : 1; }

const tb_qos_rule *tb_coord_level_rules(const run_ctx *c, int *n, tb_qos_rule **own) {
    const tb_tiledef *def = c->o->def;
    int k = 0;
    *own = NULL;
    *n = def->n_rules;
    if (!c->alone) return def->rules;
    *own = xcalloc((size_t)def->n_rules + 1, sizeof **own);
    for (int i = 0; i < def->n_rules; i++)
        if (strcmp(def->rules[i].workload, c->alone->name) == 0) (*own)[k++] = def->rules[i];
    *n = k;
    return *own;
}

/* Tells the observer, and the run's events, which level begins. */
static void announce(run_ctx *c, int tiles) {
    char msg[160];
    if (c->alone)
        snprintf(msg, sizeof msg, "%d tiles: consolidation interference: %s alone in each tile", tiles, c->alone->name);
    else
        snprintf(msg, sizeof msg, "%d tiles: consolidation interference: the whole tile", tiles);
    tb_coord_note(c, "info", msg);
    if (c->obs->level_alone) c->obs->level_alone(c->obs->arg, tiles, c->alone ? c->alone->name : NULL);
}

int tb_coord_run_level_set(run_ctx *c, int tiles, char *err) {
    const tb_tiledef *def = c->o->def;
    if (!c->o->interference) return tb_coord_run_level(c, tiles, err);
    for (int w = 0; w < def->n_workloads; w++) {
        int r;
        c->alone = &def->workloads[w];
        announce(c, tiles);
        r = tb_coord_run_level(c, tiles, err);
        c->alone = NULL;
        c->levels_done++;
        if (r < 0) return r;
        if (c->lg->ops->gone && c->lg->ops->gone(c->lg->self)) {
            snprintf(err, TB_ERR_LEN, "%s", c->lg->ops->gone(c->lg->self));
            return -1;
        }
        if (tb_coord_stopped(c)) return -2;
    }
    announce(c, tiles);
    return tb_coord_run_level(c, tiles, err);
}
