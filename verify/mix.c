/*
 * mix.c: a workload's target op mix, the target of a `mix_deviation` rule
 * (docs/tile-file.md), worked out from the tile file alone: kv's SET share
 * is `set_pct` (50 when not given) and GET the rest; web's targets are the
 * long-run (stationary) distribution of its `next.OP` matrix. The run gets
 * the web targets by solving the balance equations; this file iterates the
 * chain instead (the lazy chain (P + I) / 2, which has the same stationary
 * distribution and converges for every chain with a single one), so the
 * two methods check each other. Other kinds have no mix.
 */
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tb_common.h"
#include "verify/verify_int.h"

/* web's mix ops, in the order of the next.OP rows (docs/tile-file.md) */
static const char *const web_ops[] = {"HomePage",     "Login",     "TagSearch", "EventDetail",
                                      "PersonDetail", "AddPerson", "AddEvent"};
#define N_WEB (sizeof web_ops / sizeof web_ops[0])

typedef struct wmix {
    const char *workload; /* the section wanted: [workload.NAME] */
    char kind[32];
    char set_pct[32];
    double next[N_WEB][N_WEB];
    int rows;    /* bit i: next.<op i> given */
    int bad;     /* a row that does not read */
    int section; /* the section was seen */
} wmix;

static int web_index(const char *op, size_t n) {
    for (size_t i = 0; i < N_WEB; i++)
        if (strlen(web_ops[i]) == n && strncmp(web_ops[i], op, n) == 0) return (int)i;
    return -1;
}

/* "To=PCT To=PCT ..." into row. */
static int parse_row(const char *value, double *row) {
    const char *p = value;
    while (*p) {
        const char *eq;
        char *end;
        int to;
        p += strspn(p, " ,\t");
        if (!*p) break;
        if (!(eq = strchr(p, '=')) || (to = web_index(p, (size_t)(eq - p))) < 0) return -1;
        row[to] = strtod(eq + 1, &end);
        if (end == eq + 1 || !(row[to] >= 0.0 && row[to] <= 100.0)) return -1;
        p = end;
    }
    return 0;
}

static int ini_cb(void *user, const char *section, const char *key, const char *value) {
    wmix *m = user;
    int i;
    if (strncmp(section, "workload.", 9) != 0 || strcmp(section + 9, m->workload) != 0) return 1;
    m->section = 1;
    if (strcmp(key, "kind") == 0) {
        snprintf(m->kind, sizeof m->kind, "%s", value);
    } else if (strcmp(key, "set_pct") == 0) {
        snprintf(m->set_pct, sizeof m->set_pct, "%s", value);
    } else if (strncmp(key, "next.", 5) == 0 && (i = web_index(key + 5, strlen(key + 5))) >= 0) {
        memset(m->next[i], 0, sizeof m->next[i]);
        if (parse_row(value, m->next[i]) != 0) m->bad = 1;
        m->rows |= 1 << i;
    }
    return 1;
}

/* The stationary distribution of the chain with rows next (in %), by
 * iterating the lazy chain from the uniform mix until it stops moving. */
static int stationary(const double next[N_WEB][N_WEB], double *pct) {
    double x[N_WEB], y[N_WEB];
    for (size_t i = 0; i < N_WEB; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < N_WEB; j++)
            sum += next[i][j];
        if (fabs(sum - 100.0) > 1e-6) return -1; /* the run refuses such a row */
        x[i] = 1.0 / N_WEB;
    }
    for (int it = 0; it < 1000000; it++) {
        double moved = 0.0;
        for (size_t j = 0; j < N_WEB; j++) {
            y[j] = 0.5 * x[j];
            for (size_t i = 0; i < N_WEB; i++)
                y[j] += 0.5 * x[i] * next[i][j] / 100.0;
        }
        for (size_t j = 0; j < N_WEB; j++) {
            moved += fabs(y[j] - x[j]);
            x[j] = y[j];
        }
        if (moved < 1e-14) {
            for (size_t j = 0; j < N_WEB; j++)
                pct[j] = 100.0 * x[j];
            return 0;
        }
    }
    return -1;
}

int tb_vmix_targets(const char *config, const char *workload, tb_vmix *out) {
    wmix m;
    memset(&m, 0, sizeof m);
    memset(out, 0, sizeof *out);
    m.workload = workload;
    if (ini_parse_string(config ? config : "", ini_cb, &m) < 0 || !m.section) return -1;
    if (strcmp(m.kind, "kv") == 0) {
        char *end;
        double set = m.set_pct[0] ? strtod(m.set_pct, &end) : 50.0;
        if ((m.set_pct[0] && *end) || !(set >= 0.0 && set <= 100.0)) return -1;
        out->n = 2;
        snprintf(out->op[0], sizeof out->op[0], "SET");
        out->pct[0] = set;
        snprintf(out->op[1], sizeof out->op[1], "GET");
        out->pct[1] = 100.0 - set;
        return 0;
    }
    if (strcmp(m.kind, "web") == 0 && !m.bad && m.rows == (1 << N_WEB) - 1) {
        if (stationary(m.next, out->pct) != 0) return -1;
        out->n = N_WEB;
        for (size_t i = 0; i < N_WEB; i++)
            snprintf(out->op[i], sizeof out->op[i], "%s", web_ops[i]);
        return 0;
    }
    return -1;
}
