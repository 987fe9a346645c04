/*
 * lg_live.c: the workers' live latency record (lg_live.h).
 */
#include "loadgen/lg_live.h"

#include <string.h>

void tb_lg_live_init(tb_lg_live *l) {
    memset(l, 0, sizeof *l);
    l->phase = -1;
}

void tb_lg_live_clear(tb_lg_live *l) {
    for (int w = 0; w < TB_MAX_WORKLOADS; w++)
        for (int k = 0; k < TB_MAX_OPS; k++)
            tb_hist_free(l->h[w][k]);
    tb_lg_live_init(l);
}

void tb_lg_live_record(tb_lg_live *l, int phase, int w, int k, uint64_t latency_us) {
    if (phase != l->phase || w < 0 || w >= TB_MAX_WORKLOADS || k < 0 || k >= TB_MAX_OPS) return;
    if (!l->h[w][k]) l->h[w][k] = tb_hist_new();
    tb_hist_record(l->h[w][k], latency_us);
}

void tb_lg_live_swap(tb_lg_live *l, int phase, tb_lg_live *taken) {
    *taken = *l;
    memset(l->h, 0, sizeof l->h);
    l->phase = phase;
}

void tb_lg_live_drain(tb_lg_live *taken, int phase, tb_lg_stats *out) {
    for (int w = 0; w < TB_MAX_WORKLOADS && w < out->n_workloads; w++)
        for (int k = 0; k < TB_MAX_OPS; k++) {
            tb_opstat *c;
            if (!taken->h[w][k] || taken->phase != phase) continue;
            c = tb_lg_cell(out, 1, w, k);
            if (!c->hist) c->hist = tb_hist_new();
            tb_hist_merge(c->hist, taken->h[w][k]);
            c->count += tb_hist_count(taken->h[w][k]);
        }
    tb_lg_live_clear(taken);
}
