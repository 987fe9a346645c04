/*
 * recent.c: the recent-latency window of recent.h. Each op keeps its
 * intervals oldest first; an update appends the new one and drops those
 * that ended a window ago or earlier, so at one update a second an op holds
 * about window / 1 s of them.
 */
#include "metrics/recent.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define MAX_SNAPS 64 /* intervals per op: a bound for updates faster than expected */

typedef struct snap {
    uint64_t t_us;
    tb_hist *h;
} snap;

typedef struct recent_op {
    char *workload, *op;
    snap s[MAX_SNAPS]; /* t_us: when the interval ended */
    int n;
    uint64_t from_us; /* where the window of s begins: the end of the newest dropped; 0: the phase's start */
} recent_op;

struct tb_recent {
    uint64_t window_us;
    uint64_t t0_us; /* the first snapshot since the last reset; 0: none */
    recent_op *ops;
    size_t n, cap;
};

tb_recent *tb_recent_new(uint64_t window_us) {
    tb_recent *r = xcalloc(1, sizeof *r);
    r->window_us = window_us;
    return r;
}

static void drop(recent_op *o, int k) { /* the k oldest */
    for (int i = 0; i < k; i++)
        tb_hist_free(o->s[i].h);
    memmove(o->s, o->s + k, (size_t)(o->n - k) * sizeof *o->s);
    o->n -= k;
}

void tb_recent_reset(tb_recent *r) {
    for (size_t i = 0; i < r->n; i++) {
        drop(&r->ops[i], r->ops[i].n);
        r->ops[i].from_us = 0;
    }
    r->t0_us = 0;
}

void tb_recent_free(tb_recent *r) {
    if (!r) return;
    tb_recent_reset(r);
    for (size_t i = 0; i < r->n; i++) {
        free(r->ops[i].workload);
        free(r->ops[i].op);
    }
    free(r->ops);
    free(r);
}

static recent_op *find_op(tb_recent *r, const char *workload, const char *op) {
    recent_op *o;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->ops[i].workload, workload) == 0 && strcmp(r->ops[i].op, op) == 0) return &r->ops[i];
    r->ops = tb_grow(r->ops, r->n, &r->cap, sizeof *r->ops);
    o = &r->ops[r->n++];
    memset(o, 0, sizeof *o);
    o->workload = xstrdup(workload);
    o->op = xstrdup(op);
    return o;
}

tb_hist *tb_recent_update(tb_recent *r, const char *workload, const char *op, tb_hist *iv, uint64_t now_us,
                          uint64_t *window_us) {
    recent_op *o = find_op(r, workload, op);
    tb_hist *w = tb_hist_new();
    if (!r->t0_us) r->t0_us = now_us;
    if (o->n == MAX_SNAPS) {
        o->from_us = o->s[0].t_us;
        drop(o, 1);
    }
    o->s[o->n].t_us = now_us;
    o->s[o->n++].h = iv;
    while (o->n > 0 && o->s[0].t_us + r->window_us <= now_us) { /* ended a window ago: out */
        o->from_us = o->s[0].t_us;
        drop(o, 1);
    }
    for (int i = 0; i < o->n; i++)
        tb_hist_merge(w, o->s[i].h);
    *window_us = now_us - (o->from_us ? o->from_us : r->t0_us);
    return w;
}

int tb_recent_n(const tb_recent *r) { return (int)r->n; }
const char *tb_recent_workload(const tb_recent *r, int i) { return r->ops[i].workload; }
const char *tb_recent_op(const tb_recent *r, int i) { return r->ops[i].op; }
